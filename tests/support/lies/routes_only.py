"""A node that lies only on user routes (sessions of more than one hop) and answers
replays honestly, so it is never a lying judge and its lie is the one an audit of its
route must catch. Its lie needs the node's ``Lie`` (``MESHNET_TEST_LIE_RATE=1``, or
``node.server._ctx.lie`` in process). ``LIED`` lists the nodes that lied on a route,
so a test can act right after the lie (announce the liar's departure, drop it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.dataplane.hop import HopSession

Reply = Callable[[Any, Any, dict[str, str]], bytes]
LIED: list[str] = []  # node ids, one per lying route reply


def wrap(original: Reply) -> Reply:
    def _reply(self: Any, result: Any, meta: dict[str, str]) -> bytes:
        grant = self._grant
        lie = getattr(self._ctx, "lie", None)
        if grant is not None and len(grant.ticket.hops) > 1:
            if lie is not None:
                LIED.append(self._ctx.node_id)
            return original(self, result, meta)
        self._ctx.lie = None  # a replay (one hop): honest
        try:
            return original(self, result, meta)
        finally:
            self._ctx.lie = lie

    return _reply


def install() -> None:
    HopSession._reply = wrap(HopSession._reply)  # type: ignore[method-assign,assignment]
