"""A node that perturbs every step reply (``rate`` at rate 1): hidden states scaled by
5 %, a last hop's token shifted by one. Combined with a module that chooses *when* the
node lies (``deep_session``, ``replay_only``), that module decides.
"""

from __future__ import annotations

import os

from tests.support.lies import rate


def install() -> None:
    os.environ.setdefault(rate.LIE_RATE_ENV, "1")
    rate.install()
