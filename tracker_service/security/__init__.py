"""Who may talk to the tracker and whom it dials: signed-request checks, the
endpoint policy, per-address limits and the hashed secrets it keeps.
"""
