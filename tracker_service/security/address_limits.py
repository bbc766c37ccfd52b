"""Per-address rate limits for the tracker's open doors.

``POST /api/v1/routes`` (when no API keys are configured) and node
registration need no account, so without a limit one address could mint
tickets or registrations as fast as the tracker answers. Each door counts
requests per client address in a sliding one-minute window in this replica's
memory and refuses the excess with 429 ``rate-limited``, saying when to retry.
Memory stays bounded: idle addresses are dropped, and past ``max_addresses``
the oldest window is evicted.

Every per-address limit counts an address *group* (``address_group``): one IPv4
address, or one IPv6 /64. A home or a VPS is handed a whole /64, so counting exact
IPv6 addresses let one machine pose as 2^64 clients.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from tracker_service.domain.address_groups import address_group
from tracker_service.errors import AddressLimited

WINDOW_S = 60.0
MAX_ADDRESSES = 100_000


class AddressRateLimiter:
    def __init__(
        self,
        per_minute: int,
        what: str,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_addresses: int = MAX_ADDRESSES,
    ) -> None:
        self.per_minute = per_minute
        self._what = what
        self._clock = clock
        self._max = max_addresses
        self._windows: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def admit(self, address: str | None) -> None:
        """Count one request from `address`, or raise AddressLimited."""
        key = address_group(address)
        now = self._clock()
        with self._lock:
            window = self._windows.pop(key, None) or deque()
            while window and window[0] <= now - WINDOW_S:
                window.popleft()
            if len(window) >= self.per_minute:
                self._windows[key] = window
                wait = window[0] + WINDOW_S - now
                raise AddressLimited(
                    f"{key} made {self.per_minute} {self._what} in the last minute, the limit "
                    f"per address; retry in {wait:.0f} s",
                    retry_after_s=int(wait) + 1,
                )
            window.append(now)
            self._windows[key] = window  # most recent last
            while len(self._windows) > self._max:
                self._windows.popitem(last=False)
