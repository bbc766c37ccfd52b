"""Which nodes served a prompt's prefix lately: the gateway's hint to the route planner.

Nodes keep the KV of recent prefixes (docs/wire.md#prefix-cache), but only a
route through the nodes that computed a prefix can reuse it. The gateway
remembers, per recipe, the nodes of the route that served each prompt, keyed
by chained hashes of the prompt's 16-token blocks; the next prompt that shares
a prefix asks the planner to prefer those nodes while they cost at most twice
the best of their ranges (``CandidatePool.pick``, ``RoutingPolicy.prefer_slack``).
It is only a hint: a node that left, is excluded or is loaded is not chosen,
and a route through other nodes still answers, with a full prefill.

In memory, per tracker process, least recently used first: no database write
on the request path and nothing shared between replicas (a replica that does
not know a prefix plans as before).
"""

from __future__ import annotations

import hashlib
import struct
import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence

BLOCK_TOKENS = 16  # the nodes' block size: a prefix shorter than a block is never cached
DEFAULT_ENTRIES = 16_384


def prefix_keys(recipe: Hashable, token_ids: Sequence[int]) -> list[bytes]:
    """Chained keys of the prompt's whole blocks (this process's own, not the nodes')."""
    key = hashlib.sha256(repr(recipe).encode()).digest()
    keys: list[bytes] = []
    for at in range(0, len(token_ids) - BLOCK_TOKENS + 1, BLOCK_TOKENS):
        block = token_ids[at : at + BLOCK_TOKENS]
        key = hashlib.sha256(key + struct.pack(f"<{BLOCK_TOKENS}q", *block)).digest()
        keys.append(key)
    return keys


class PrefixAffinity:
    def __init__(self, max_entries: int = DEFAULT_ENTRIES) -> None:
        self.max_entries = max_entries
        self._nodes: OrderedDict[bytes, tuple[str, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def nodes_for(self, recipe: Hashable, token_ids: Sequence[int]) -> frozenset[str]:
        """The nodes of the route that served the longest known prefix (empty: none)."""
        keys = prefix_keys(recipe, token_ids[:-1])  # the nodes always compute the last one
        with self._lock:
            for key in reversed(keys):
                nodes = self._nodes.get(key)
                if nodes is not None:
                    self._nodes.move_to_end(key)
                    return frozenset(nodes)
        return frozenset()

    def record(self, recipe: Hashable, token_ids: Sequence[int], node_ids: Sequence[str]) -> None:
        """These nodes now hold the prompt's blocks."""
        nodes = tuple(node_ids)
        with self._lock:
            for key in prefix_keys(recipe, token_ids):
                self._nodes[key] = nodes
                self._nodes.move_to_end(key)
            while len(self._nodes) > self.max_entries:
                self._nodes.popitem(last=False)
