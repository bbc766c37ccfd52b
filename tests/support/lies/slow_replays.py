"""Not a lie: an honest node that is slow on replays (one-hop sessions), by
``MESHNET_TEST_REPLAY_STEP_S`` seconds a step (default 0.05), as a busy gaming PC
replaying a long session is. With it a test sees an audit run out of time, or finish
only because its budget grew with the session. In process, ``SLOW[node_id] = s``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import Any

from core.dataplane.hop import HopSession

STEP_ENV = "MESHNET_TEST_REPLAY_STEP_S"
SLOW: dict[str, float] = {}  # node id -> seconds per replayed step
Step = Callable[[Any, bytes], Awaitable[Any]]


def wrap(original: Step) -> Step:
    async def _step(self: Any, data: bytes) -> Any:
        grant = self._grant
        delay = SLOW.get(self._ctx.node_id, SLOW.get("*", 0.0))
        if delay and grant is not None and len(grant.ticket.hops) == 1:
            await asyncio.sleep(delay)
        return await original(self, data)

    return _step


def install() -> None:
    HopSession._step = wrap(HopSession._step)  # type: ignore[method-assign,assignment]
    SLOW["*"] = float(os.environ.get(STEP_ENV, "0.05"))
