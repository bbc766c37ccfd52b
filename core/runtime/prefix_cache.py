"""The node's prefix cache: the KV of recent prompt prefixes, kept in token blocks.

A repeated system prompt, or a conversation's earlier turns sent again with
the next one, need not be recomputed: a session that starts with a prefix this
node computed recently gets its KV copied in and computes only the rest.

Keys. Positions are grouped in blocks of ``BLOCK_POSITIONS``; block ``i``'s key
is ``sha256(key[i-1] || bytes of the inputs at its positions)``, chained from
a root that names the session's start layer and input kind (as vLLM's
automatic prefix caching chains block hashes). The KV of a block depends on
every input before it, and the chain covers exactly those, so equal keys mean
equal KV. The node derives every key from the inputs it receives itself:
token ids at a route's first hop, the previous hop's hidden-state bytes at any
other. A client never names a key, so none can make one node hand another
user KV that does not belong to that user's prompt, and an unknown prefix is
simply a miss (a full prefill). For the next hop to find its own keys, a hop
that is not the last also keeps the hidden states it replied for each block
and replies them again on a hit, byte for byte.

Budget. The cache lives inside the node's KV budget (``kv_budget.py``):
its bytes plus the sessions' reservations never pass the budget, a session
opening evicts cached blocks to make room, and the cache holds at most its own
capacity. Eviction is least recently used; a lookup refreshes a chain's
blocks last to first, so the tail of a cold chain goes before its head (a
chain without its head is unreachable).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import torch

log = logging.getLogger(__name__)

BLOCK_POSITIONS = 16
DOMAIN = b"meshnet.prefix-cache.v1\n"
TOKENS, HIDDEN = "tokens", "hidden"


def chain_root(kind: str, start_layer: int, dtype: torch.dtype) -> bytes:
    """The key before the first block: what kind of input at which layer, in which dtype."""
    return hashlib.sha256(DOMAIN + f"{kind}:{start_layer}:{dtype}".encode()).digest()


def position_rows(inputs: torch.Tensor, takes_tokens: bool, dtype: torch.dtype) -> torch.Tensor:
    """A batch-1 step's inputs as (T, bytes per position) uint8 on the CPU: what keys hash.

    Token ids as int64, hidden states in the compute dtype the runtime reads them as."""
    if takes_tokens:
        rows = inputs.reshape(-1).to(device="cpu", dtype=torch.int64).reshape(-1, 1)
    else:
        rows = inputs.reshape(-1, inputs.shape[-1]).to(device="cpu", dtype=dtype)
    return rows.contiguous().view(torch.uint8)  # (T, bytes)


def block_keys(root: bytes, rows: torch.Tensor, blocks: int) -> list[bytes]:
    """The chained keys of the first ``blocks`` full blocks of ``rows`` (T, bytes)."""
    keys: list[bytes] = []
    key = root
    for i in range(blocks):
        chunk = rows[i * BLOCK_POSITIONS : (i + 1) * BLOCK_POSITIONS]
        hasher = hashlib.sha256(key)
        hasher.update(chunk.numpy().data)
        key = hasher.digest()
        keys.append(key)
    return keys


@dataclass(frozen=True)
class CachedBlock:
    kv: torch.Tensor  # (layers, 2 nkv, BLOCK, hd): the session cache's layout, batch row 0
    hidden: torch.Tensor | None  # (BLOCK, H) replied for it by a hop that is not last

    @property
    def nbytes(self) -> int:
        size = self.kv.numel() * self.kv.element_size()
        if self.hidden is not None:
            size += self.hidden.numel() * self.hidden.element_size()
        return size


@dataclass
class CacheStats:
    """What the cache did: the health answer and the tests read it."""

    lookups: int = 0
    hit_blocks: int = 0
    stored_blocks: int = 0
    evicted_blocks: int = 0


class PrefixCache:
    """Blocks by key, least recently used first; bounded by ``capacity_bytes``.

    The caller (``SessionManager``) says how many bytes the budget leaves it at
    each insert, so sessions always come first."""

    def __init__(self, capacity_bytes: int) -> None:
        self.capacity_bytes = max(0, capacity_bytes)
        self.stats = CacheStats()
        self._blocks: OrderedDict[bytes, CachedBlock] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        with self._lock:
            return self._bytes

    def __len__(self) -> int:
        with self._lock:
            return len(self._blocks)

    def __contains__(self, key: bytes) -> bool:
        with self._lock:
            return key in self._blocks

    def match(self, keys: Sequence[bytes]) -> list[CachedBlock]:
        """The cached blocks of the longest prefix of ``keys``, refreshed last to first."""
        with self._lock:
            self.stats.lookups += 1
            found: list[CachedBlock] = []
            for key in keys:
                block = self._blocks.get(key)
                if block is None:
                    break
                found.append(block)
            self._refresh(keys[: len(found)])
            self.stats.hit_blocks += len(found)
            return found

    def refresh(self, keys: Sequence[bytes]) -> None:
        """Mark a chain used: its blocks become the most recent, its head most of all."""
        with self._lock:
            self._refresh(keys)

    def _refresh(self, keys: Sequence[bytes]) -> None:
        for key in reversed(keys):
            if key in self._blocks:
                self._blocks.move_to_end(key)

    def put(
        self, key: bytes, block: CachedBlock, room_bytes: int, keep: Sequence[bytes] = ()
    ) -> bool:
        """Keep ``block`` under ``key`` within ``min(capacity, room_bytes)``, evicting
        least recently used blocks but never those of ``keep`` (the chain it extends:
        a chain without its head is unreachable). False when it does not fit."""
        limit = min(self.capacity_bytes, room_bytes)
        size = block.nbytes
        with self._lock:
            if key in self._blocks:
                return True
            if size > limit:
                return False
            if self._bytes + size > limit:
                self._evict_to(limit - size, frozenset(keep))
                if self._bytes + size > limit:
                    return False
            self._blocks[key] = block  # the caller refreshes its chain after (tail coldest)
            self._bytes += size
            self.stats.stored_blocks += 1
            return True

    def shrink_to(self, limit_bytes: int) -> int:
        """Evict least recently used blocks until at most ``limit_bytes`` are held."""
        with self._lock:
            return self._evict_to(limit_bytes)

    def clear(self) -> None:
        with self._lock:
            self._evict_to(0)

    def _evict_to(self, limit_bytes: int, keep: frozenset[bytes] = frozenset()) -> int:
        freed = 0
        if keep:
            for key in [k for k in self._blocks if k not in keep]:
                if self._bytes <= limit_bytes:
                    break
                freed += self._drop(key)
            return freed
        while self._blocks and self._bytes > limit_bytes:
            freed += self._drop(next(iter(self._blocks)))
        return freed

    def _drop(self, key: bytes) -> int:
        block = self._blocks.pop(key)
        self._bytes -= block.nbytes
        self.stats.evicted_blocks += 1
        return block.nbytes


def describe(cache: PrefixCache | None) -> dict[str, int] | None:
    """The cache as the node's health answer shows it (None: caching is off)."""
    if cache is None:
        return None
    stats = cache.stats
    return {
        "block_positions": BLOCK_POSITIONS,
        "capacity_bytes": cache.capacity_bytes,
        "bytes": cache.nbytes,
        "blocks": len(cache),
        "lookups": stats.lookups,
        "hit_blocks": stats.hit_blocks,
        "stored_blocks": stats.stored_blocks,
        "evicted_blocks": stats.evicted_blocks,
    }
