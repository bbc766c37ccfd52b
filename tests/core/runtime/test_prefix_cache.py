"""The prefix cache: a cached prefix gives the tokens an uncached one does; the budget holds.

Two shards of the tiny Llama ([0, 2) and [2, 4)) stand for a two-hop route: the
first hop keys blocks by token ids, the second by the hidden-state bytes it is
handed, and the first replies the hidden states it kept so the second can match.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from core.errors import CapacityError
from core.runtime import SessionManager, Shard
from core.runtime.batch import step_batch
from core.runtime.prefix_cache import BLOCK_POSITIONS, CachedBlock, PrefixCache

BLOCK = BLOCK_POSITIONS


@pytest.fixture(scope="module")
def head(tiny_llama: Path) -> Shard:
    return Shard.load(tiny_llama, 0, 2)


@pytest.fixture(scope="module")
def tail(tiny_llama: Path) -> Shard:
    return Shard.load(tiny_llama, 2, 4)


def prompt(n: int, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, 256, (1, n), generator=torch.Generator().manual_seed(seed))


class Route:
    """Two managers as two hops; ``run`` prefills through both, then decodes greedily."""

    def __init__(self, head: Shard, tail: Shard, cache_bytes: int = 64 * 2**20) -> None:
        self.hops = [
            SessionManager(head, prefix_cache_bytes=cache_bytes),
            SessionManager(tail, prefix_cache_bytes=cache_bytes),
        ]
        self.cached: list[int] = []

    def run(self, ids: torch.Tensor, new_tokens: int) -> tuple[list[int], torch.Tensor]:
        sessions = [m.open(256) for m in self.hops]
        self.cached = []
        x: torch.Tensor = ids
        for manager, session in zip(self.hops, sessions, strict=True):
            cached, replied = manager.restore_prefix(session, x)
            self.cached.append(cached)
            rest = x.narrow(1, cached, x.shape[1] - cached)
            result = session.step(rest, return_logits=session.shard.is_last)
            if result.hidden is not None:
                x = result.hidden if replied is None else torch.cat([replied, result.hidden], 1)
        assert result.token_ids is not None and result.logits is not None
        last_logits = result.logits[0, -1]
        tokens = [int(result.token_ids[0])]
        for _ in range(new_tokens - 1):
            x = torch.tensor([[tokens[-1]]])
            for session in sessions:
                result = session.step(x)
                x = result.hidden if result.hidden is not None else x
            assert result.token_ids is not None
            tokens.append(int(result.token_ids[0]))
        for session in sessions:
            session.close()
        return tokens, last_logits


def test_a_repeated_prompt_is_taken_from_the_cache_and_gives_the_same_tokens(
    head: Shard, tail: Shard
) -> None:
    ids = prompt(70)
    fresh_tokens, fresh_logits = Route(head, tail, cache_bytes=0).run(ids, 12)
    route = Route(head, tail)
    first_tokens, _ = route.run(ids, 12)
    assert route.cached == [0, 0]
    second_tokens, second_logits = route.run(ids, 12)
    # (70 - 1) // 16 = 4 whole blocks; the last position is always computed
    assert route.cached == [4 * BLOCK, 4 * BLOCK]
    assert first_tokens == fresh_tokens == second_tokens
    torch.testing.assert_close(second_logits, fresh_logits, rtol=1e-4, atol=1e-4)


def test_a_shared_start_reuses_only_the_blocks_before_the_first_difference(
    head: Shard, tail: Shard
) -> None:
    route = Route(head, tail)
    ids = prompt(80)
    route.run(ids, 2)
    other = ids.clone()
    other[0, 40] = (int(other[0, 40]) + 1) % 256  # inside the third block
    expected, _ = Route(head, tail, cache_bytes=0).run(other, 8)
    tokens, _ = route.run(other, 8)
    assert route.cached == [2 * BLOCK, 2 * BLOCK]
    assert tokens == expected


def test_an_unknown_prompt_misses_and_is_computed_in_full(head: Shard, tail: Shard) -> None:
    route = Route(head, tail)
    route.run(prompt(64, seed=1), 2)
    expected, _ = Route(head, tail, cache_bytes=0).run(prompt(64, seed=2), 6)
    tokens, _ = route.run(prompt(64, seed=2), 6)
    assert route.cached == [0, 0]
    assert tokens == expected


def test_decoded_positions_are_cached_too_for_the_next_turn(head: Shard, tail: Shard) -> None:
    route = Route(head, tail)
    ids = prompt(20)
    answer, _ = route.run(ids, 30)
    # the next turn sends the first turn and its answer again, then more
    turn = torch.cat([ids, torch.tensor([answer]), prompt(10, seed=5)], dim=1)
    expected, _ = Route(head, tail, cache_bytes=0).run(turn, 6)
    tokens, _ = route.run(turn, 6)
    # 20 + 29 = 49 positions were held: 3 whole blocks, the prompt's and the answer's
    assert route.cached == [3 * BLOCK, 3 * BLOCK]
    assert tokens == expected


def test_batched_decode_steps_feed_the_cache_like_solo_ones(head: Shard) -> None:
    manager = SessionManager(head, prefix_cache_bytes=2**20)
    sessions = [manager.open(64) for _ in range(2)]
    for i, session in enumerate(sessions):
        session.step(prompt(10, seed=i))
    for _ in range(BLOCK - 10):
        step_batch(sessions, [torch.tensor([[7]]), torch.tensor([[9]])])
    cache = manager.prefix_cache
    assert cache is not None and len(cache) == 2  # one whole block per session
    for session in sessions:
        assert session.prefix is not None
        assert session.prefix.keys[0] in cache


def test_a_rewound_session_stops_feeding_the_cache(head: Shard) -> None:
    manager = SessionManager(head, prefix_cache_bytes=2**20)
    session = manager.open(64)
    session.step(prompt(10))
    session.rewind(5)
    session.step(prompt(30, seed=3))
    assert manager.prefix_cache is not None and len(manager.prefix_cache) == 0


def test_the_cache_stays_inside_the_budget_and_gives_way_to_sessions(head: Shard) -> None:
    per_token = head.kv_bytes_per_token()
    block_bytes = per_token * BLOCK + BLOCK * head.config.hidden_size * 4  # kv + replied
    budget = per_token * 128 + 4 * block_bytes
    manager = SessionManager(head, kv_budget_bytes=budget, prefix_cache_bytes=budget)
    cache = manager.prefix_cache
    assert cache is not None
    session = manager.open(128)  # leaves room for 4 blocks
    session.step(prompt(6 * BLOCK))
    assert len(cache) == 4 and cache.nbytes == 4 * block_bytes
    assert manager.reserved_bytes + cache.nbytes <= budget
    # the chain's head is kept: its tail, which would orphan nothing, is what did not fit
    assert session.prefix is not None
    assert [k in cache for k in session.prefix.keys] == [True] * 4 + [False] * 2
    assert cache.stats.evicted_blocks == 0
    session.close()
    # a session needing most of the budget evicts the cached blocks rather than being refused
    big = manager.open(128 + 5 * BLOCK)
    assert cache.nbytes == 0 and cache.stats.evicted_blocks == 4
    assert manager.reserved_bytes + cache.nbytes <= budget
    with pytest.raises(CapacityError):  # the budget itself still holds
        manager.open(64)
    big.close()


def test_eviction_takes_the_least_recently_used_chain_tail_first() -> None:
    def block() -> CachedBlock:
        return CachedBlock(torch.zeros(1, 2, BLOCK, 4), None)  # 512 bytes

    cache = PrefixCache(capacity_bytes=4 * 512)
    a, b = [b"a0", b"a1"], [b"b0", b"b1"]
    for chain in (a, b):
        for key in chain:
            assert cache.put(key, block(), room_bytes=10**9)
        cache.refresh(chain)
    assert [len(x) for x in (cache.match(a), cache.match(b))] == [2, 2]
    cache.match(a)  # a is now the most recently used chain
    assert cache.put(b"c0", block(), room_bytes=10**9)
    assert b"b1" not in cache and b"b0" in cache  # b's tail went first
    assert len(cache.match(a)) == 2
    assert not cache.put(b"big", CachedBlock(torch.zeros(1, 2, BLOCK, 4), None), room_bytes=100)
