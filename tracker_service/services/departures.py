"""Nodes that announced they are leaving, told to the route sessions running through them.

A node that leaves on purpose (its owner paused it for a game, it stops, it moves
to other layers, the app quits) tells the tracker first with its signed
deregister (docs/wire.md#leaving). The tracker takes it out of routing, and
every route session of this process with a hop on that node is told at once:
the hop is closed and its pending step fails with ``node-left``, so the gateway
fails over (new route, prefix replayed) without waiting for a step timeout. A
node that crashes announces nothing; its next step's failure or the heartbeat
window finds it, as before.

One :class:`Departures` per tracker process (the gateway's sessions live in the
same event loop as the deregister route); callbacks run in that loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection

log = logging.getLogger(__name__)

OnLeave = Callable[[str], None]

__all__ = ["Departures", "OnLeave"]


class Departures:
    """Route sessions watching their hops' nodes; a departure tells each of them."""

    def __init__(self) -> None:
        self._watchers: dict[str, dict[int, OnLeave]] = {}
        self._next = 0
        self.announced = 0  # departures told (for /metrics and the tests)

    def watch(self, node_ids: Collection[str], on_leave: OnLeave) -> Callable[[], None]:
        """Call ``on_leave(node_id)`` when one of ``node_ids`` announces it leaves; the
        returned function ends the watch (a session that closed)."""
        token = self._next
        self._next += 1
        for node_id in set(node_ids):
            self._watchers.setdefault(node_id, {})[token] = on_leave

        def unwatch() -> None:
            for node_id in set(node_ids):
                watchers = self._watchers.get(node_id)
                if watchers is not None:
                    watchers.pop(token, None)
                    if not watchers:
                        del self._watchers[node_id]

        return unwatch

    def announce(self, node_id: str) -> int:
        """Tell every session through ``node_id`` that it left; how many were told."""
        watchers = list(self._watchers.pop(node_id, {}).values())
        self.announced += 1
        for on_leave in watchers:
            try:
                on_leave(node_id)
            except Exception:  # one session's trouble must not keep the others waiting
                log.exception("telling a route session that node %s left failed", node_id[:12])
        if watchers:
            log.info("node %s left: %d route session(s) fail over", node_id[:12], len(watchers))
        return len(watchers)

    def watching(self, node_id: str) -> int:
        """How many sessions run through ``node_id`` now."""
        return len(self._watchers.get(node_id, {}))
