"""MeshNet node core: identity, shard runtime, doctor, admission, data plane.

Imports no Qt and no web framework; the GUI and the CLIs in ``app`` compose it.
"""

from __future__ import annotations

__version__ = "0.1.0"
