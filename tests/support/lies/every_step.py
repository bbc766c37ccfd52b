"""A node that perturbs every step reply (``core/dataplane/lie.py`` at rate 1): hidden
states scaled by 5 %, a last hop's token shifted by one. Combined with a module that
chooses *when* the node lies (``deep_session``, ``replay_only``), that module decides.
"""

from __future__ import annotations

import os

from core.dataplane.lie import LIE_RATE_ENV


def install() -> None:
    # Read by the node's HopContext (Lie.from_env) when the node starts, after install().
    os.environ.setdefault(LIE_RATE_ENV, "1")
