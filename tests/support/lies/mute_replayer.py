"""A node that serves user routes but never answers a replay's ``open``.

A replay is recognisable: the tracker opens it with a one-hop ticket. This node
accepts the connection and then says nothing, as a sybil that wants the audited
node blamed for a timed-out audit would (or an honest node that went away
mid-session). In process, ``MUTE`` names the muted nodes (``"*"``: every node).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from core.dataplane.hop import HopSession

MUTE: set[str] = set()  # node ids (or "*") that never answer a replay's open
Open = Callable[[Any, dict[str, Any]], Awaitable[None]]


def _one_hop(opening: dict[str, Any]) -> bool:
    signed = opening.get("ticket")
    ticket = signed.get("ticket") if isinstance(signed, dict) else None
    hops = ticket.get("hops") if isinstance(ticket, dict) else None
    return isinstance(hops, list) and len(hops) == 1


def wrap(original: Open) -> Open:
    async def _open(self: Any, opening: dict[str, Any]) -> None:
        if ({"*", self._ctx.node_id} & MUTE) and _one_hop(opening):
            await asyncio.Event().wait()  # never answers; the tracker hangs up
        await original(self, opening)

    return _open


def install() -> None:
    HopSession._open = wrap(HopSession._open)  # type: ignore[method-assign,assignment]
    MUTE.add("*")
