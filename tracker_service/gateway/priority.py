"""Who goes first when the network is saturated: contributors' keys, with a fair share
for everyone else.

The gateway holds one slot per generation under way, at most ``capacity``
(``gateway_max_concurrent``; 0 turns the gate off). A request that finds
every slot taken waits in its class's queue: ``credited`` (an API key linked
to a contributor account with credit left, docs/credits.md) or ``free``
(anonymous, or no credit). When a slot frees, the next waiter is taken from
the credited queue, except that every ``free_share``-th slot handed out
while both queues wait goes to the oldest free waiter: credited requests
start first, and free requests still progress at a known rate, never
starving. Within a class, first come first served.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

CREDITED = "credited"
FREE = "free"
CLASSES = (CREDITED, FREE)
DEFAULT_FREE_SHARE = 4  # 1 in 4 contended slots goes to a free request


@dataclass
class GateStats:
    admitted: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CLASSES, 0))
    waited: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CLASSES, 0))


class PriorityGate:
    """``await gate.acquire(klass)`` ... ``gate.release()``; one event loop."""

    def __init__(self, capacity: int, *, free_share: int = DEFAULT_FREE_SHARE) -> None:
        if capacity < 0 or free_share < 1:
            raise ValueError("capacity must be >= 0 and free_share >= 1")
        self.capacity = capacity
        self.free_share = free_share
        self._busy = 0
        self._queues: dict[str, deque[asyncio.Future[None]]] = {k: deque() for k in CLASSES}
        self._contended = 0  # slots handed out while both classes waited
        self.stats = GateStats()

    @property
    def enabled(self) -> bool:
        return self.capacity > 0

    @property
    def busy(self) -> int:
        return self._busy

    def waiting(self, klass: str) -> int:
        return sum(1 for f in self._queues[klass] if not f.done())

    async def acquire(self, klass: str) -> None:
        """Take a slot, waiting in `klass`'s queue while all are busy."""
        if klass not in self._queues:
            raise ValueError(f"unknown priority class {klass!r}")
        if not self.enabled:
            return
        if self._busy < self.capacity and not any(self._queues.values()):
            self._busy += 1
            self.stats.admitted[klass] += 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queues[klass].append(future)
        self.stats.waited[klass] += 1
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # handed a slot just as the caller left: pass it on
            else:
                self._queues[klass].remove(future)
            raise
        self.stats.admitted[klass] += 1

    def release(self) -> None:
        """Give a slot back; the next waiter (by the rule above) gets it."""
        if not self.enabled:
            return
        self._busy -= 1
        self._hand_out()

    def _hand_out(self) -> None:
        while self._busy < self.capacity:
            future = self._next()
            if future is None:
                return
            self._busy += 1
            future.set_result(None)

    def _next(self) -> asyncio.Future[None] | None:
        for queue in self._queues.values():
            while queue and queue[0].done():  # cancelled waiters
                queue.popleft()
        credited, free = self._queues[CREDITED], self._queues[FREE]
        if credited and free:
            self._contended += 1
            if self._contended % self.free_share == 0:
                return free.popleft()
            return credited.popleft()
        if credited:
            return credited.popleft()
        if free:
            return free.popleft()
        return None
