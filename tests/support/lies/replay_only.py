"""A node honest on user routes that lies when it replays someone else's step.

A replay is recognisable: the tracker opens it with a one-hop ticket. This node
answers every multi-hop route honestly (so its own audits pass) and perturbs its
replies, as ````rate```` does, only on one-hop sessions: the audit or
arbitration replays it was asked to run. Its lie needs the node's ``Lie`` (a node
process: ``MESHNET_TEST_LIE_RATE=1``; in process: ``node.server._ctx.lie``), so
honest nodes in the same process stay honest.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.dataplane.hop import HopSession

Reply = Callable[[Any, Any, dict[str, str]], bytes]


def wrap(original: Reply) -> Reply:
    def _reply(self: Any, result: Any, meta: dict[str, str]) -> bytes:
        grant = self._grant
        if grant is not None and len(grant.ticket.hops) == 1:
            return original(self, result, meta)  # a replay: lie, if this node lies
        saved, self._ctx.lie = getattr(self._ctx, "lie", None), None  # a user route: honest
        try:
            return original(self, result, meta)
        finally:
            self._ctx.lie = saved

    return _reply


def install() -> None:
    HopSession._reply = wrap(HopSession._reply)  # type: ignore[method-assign,assignment]
