"""Per-node byte rate cap: a token bucket that delays, never drops.

Delaying keeps every stream correct (a step reply arrives late, not missing);
the node's link simply carries no more than its share. The clock and sleep are
injected so tests check the schedule without waiting for it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


class ByteBucket:
    """``rate`` bytes per second with bursts up to ``burst`` bytes; rate 0 means no cap."""

    def __init__(
        self,
        rate: float,
        burst: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.rate = float(rate)
        self.burst = float(burst if burst is not None else max(rate, 1.0))
        self._clock = clock
        self._sleep = sleep
        self._tokens = self.burst
        self._stamp = clock()
        self._lock = asyncio.Lock()
        self.waited_s = 0.0  # total delay imposed, for the metrics

    def delay_for(self, size: int) -> float:
        """Take ``size`` bytes now; returns how long the caller must wait before sending."""
        if self.rate <= 0:
            return 0.0
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now
        self._tokens -= size  # may go negative: a frame larger than the burst still passes
        return 0.0 if self._tokens >= 0 else -self._tokens / self.rate

    async def take(self, size: int) -> float:
        """Wait until ``size`` bytes fit the cap; returns the seconds waited."""
        if self.rate <= 0:
            return 0.0
        async with self._lock:  # one waiter at a time keeps the order fair
            delay = self.delay_for(size)
            if delay > 0:
                self.waited_s += delay
                await self._sleep(delay)
            return delay
