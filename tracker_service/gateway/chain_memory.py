"""Which routes could not run as chains lately (docs/wire.md#chained-hops).

Two nodes the tracker reaches may still not reach each other (routers that drop
connections between homes). A route over them fails as a chain at its open, costing the
request the time the first hop spends dialling; remembering the pair for a while lets the
next requests over it open as stars at once, while other pairs keep chaining.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Sequence

FORGET_AFTER_S = 600.0  # a home's router or a node's address may change: try again later
MAX_PAIRS = 4096  # bounded: the oldest entries go first


class ChainMemory:
    def __init__(
        self, forget_after_s: float = FORGET_AFTER_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._forget_after_s = forget_after_s
        self._clock = clock
        self._failed: dict[tuple[str, str], float] = {}  # (from, to) -> when it failed
        self._guard = threading.Lock()

    def can_chain(self, node_ids: Sequence[str]) -> bool:
        """False while a link between two consecutive hops of this route failed lately."""
        now = self._clock()
        with self._guard:
            for pair in itertools.pairwise(node_ids):
                failed_at = self._failed.get(pair)
                if failed_at is None:
                    continue
                if now - failed_at < self._forget_after_s:
                    return False
                del self._failed[pair]
        return True

    def failed(self, node_ids: Sequence[str], hop_index: int) -> None:
        """A route over these hops failed as a chain, at hop `hop_index`: run the links
        into and out of that hop as stars for a while (which of the two failed is not
        always known: a dial that fails and a link that never came look alike)."""
        now = self._clock()
        pairs = list(itertools.pairwise(node_ids))
        touching = [p for i, p in enumerate(pairs) if i in (hop_index - 1, hop_index)]
        with self._guard:
            for pair in touching:
                self._failed.pop(pair, None)
                self._failed[pair] = now
            while len(self._failed) > MAX_PAIRS:
                del self._failed[next(iter(self._failed))]
