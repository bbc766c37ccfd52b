"""Connection caps for the data plane: per remote address and in total.

A node accepts connections from strangers. Until a ticket is verified a
connection costs the node a socket, a task and a receive buffer, so an
unbounded number of them (or many from one address) would hold memory no
ticket ever paid for. The server counts live WebSocket connections and refuses
the ones over either cap with ``too-many-connections``; the client may retry
once some of its connections ended.

The defaults are generous on purpose: a tracker's gateway opens every hop of
every user's session from one address.
"""

from __future__ import annotations

from collections import Counter

DEFAULT_MAX_CONNECTIONS = 1024
DEFAULT_MAX_PER_ADDRESS = 256


class ConnectionLimits:
    """Counts live connections; used from the server's event loop only."""

    def __init__(
        self,
        max_total: int = DEFAULT_MAX_CONNECTIONS,
        max_per_address: int = DEFAULT_MAX_PER_ADDRESS,
    ) -> None:
        self.max_total = max_total
        self.max_per_address = max_per_address
        self._by_address: Counter[str] = Counter()
        self._total = 0

    @property
    def total(self) -> int:
        return self._total

    def refusal(self, address: str) -> str | None:
        """Why a new connection from `address` is refused, or None (then it is counted)."""
        if self._total >= self.max_total:
            return (
                f"this node already serves {self._total} connections, its limit; "
                "retry later or use another node"
            )
        if self._by_address[address] >= self.max_per_address:
            return (
                f"{address} already holds {self._by_address[address]} connections to this "
                f"node (limit {self.max_per_address}); close some before opening more"
            )
        self._by_address[address] += 1
        self._total += 1
        return None

    def release(self, address: str) -> None:
        self._by_address[address] -= 1
        if self._by_address[address] <= 0:
            del self._by_address[address]
        self._total -= 1
