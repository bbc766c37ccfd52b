"""Which nodes served a prompt's prefix lately: the gateway's hint to the route planner.

Nodes keep the KV of recent prefixes (docs/wire.md#prefix-cache), but only a
route through the nodes that computed a prefix can reuse it. The gateway
remembers, per recipe, the nodes of the route that served each prompt, keyed
by chained hashes of the prompt's 16-token blocks; the next prompt that shares
a prefix asks the planner to prefer those nodes while their extra cost per
token stays below what their cached prefill spares (``preference_slack``; never
more than twice the best of a range: ``RoutingPolicy.prefer_slack``). A chat
template's system prompt, which every request shares, spares a few tokens of
prefill and so never outweighs load: two nodes on a range share the traffic.
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
from typing import NamedTuple

BLOCK_TOKENS = 16  # the nodes' block size: a prefix shorter than a block is never cached
DEFAULT_ENTRIES = 16_384
# A prefilled token costs about this share of a decode step: the default model on a
# 2-core CPU forwards 1 token in 58 ms and 128 in 324 ms (2.1 ms a token), and a GPU's
# share is smaller still. Measured, rounded up.
PREFILL_SHARE = 0.04
# Answers rarely run to a large max_tokens: past this the saving is weighed against
# this many tokens, so a generous limit does not switch affinity off.
TYPICAL_ANSWER_TOKENS = 256


class PrefixHint(NamedTuple):
    """The nodes holding a prompt's longest known prefix, and how many tokens it spans."""

    nodes: frozenset[str]
    cached_tokens: int

    def slack(self, max_new_tokens: int) -> float:
        """How much costlier per token than the best a holder may be and still be taken:
        the prefill its cache spares, spread over the answer's tokens."""
        answer = max(1, min(max_new_tokens, TYPICAL_ANSWER_TOKENS))
        return self.cached_tokens * PREFILL_SHARE / answer


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
        return self.hint_for(recipe, token_ids).nodes

    def hint_for(self, recipe: Hashable, token_ids: Sequence[int]) -> PrefixHint:
        """The longest known prefix's nodes and length (no nodes: none known)."""
        keys = prefix_keys(recipe, token_ids[:-1])  # the nodes always compute the last one
        with self._lock:
            for blocks in range(len(keys), 0, -1):
                nodes = self._nodes.get(keys[blocks - 1])
                if nodes is not None:
                    self._nodes.move_to_end(keys[blocks - 1])
                    return PrefixHint(frozenset(nodes), blocks * BLOCK_TOKENS)
        return PrefixHint(frozenset(), 0)

    def record(self, recipe: Hashable, token_ids: Sequence[int], node_ids: Sequence[str]) -> None:
        """These nodes now hold the prompt's blocks."""
        nodes = tuple(node_ids)
        with self._lock:
            for key in prefix_keys(recipe, token_ids):
                self._nodes[key] = nodes
                self._nodes.move_to_end(key)
            while len(self._nodes) > self.max_entries:
                self._nodes.popitem(last=False)
