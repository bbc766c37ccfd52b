"""The tracker's pure rules: recipe identity and digests, the wire format, allocation,
route formation, tickets and the tracker's key.

Imports nothing of the tracker above it (only ``tracker_service.errors`` and
``tracker_service.config``): no store, no HTTP, no I/O beyond reading a key file.
"""
