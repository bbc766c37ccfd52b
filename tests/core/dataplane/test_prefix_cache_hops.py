"""The prefix cache through real shard servers: a repeated prompt's prefill is served from
each hop's cache (the reply says how many positions), the tokens do not change, and the
receipts still count every position the client sent."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import torch

from core.dataplane import frames
from core.dataplane.receipts import verify_receipt
from core.runtime.generate import generate_local
from core.runtime.sampling import SamplingParams
from core.runtime.sessions import SessionManager
from core.runtime.shard import Shard
from tests.core.dataplane.conftest import (
    NODE_A_SEED,
    NODE_B_SEED,
    Key,
    Node,
    route_hops,
    start_node,
    ticket_for,
)
from tests.support.hop_client import HopClient

PROMPT = [int(t) for t in torch.randint(0, 256, (40,), generator=torch.Generator().manual_seed(7))]


@pytest.fixture(scope="module")
def cached_nodes(tiny_model: Path, tracker_key: Key) -> Iterator[tuple[Node, Node]]:
    """Nodes A [0, 2) and B [1, 4) (opened at 2), each with a prefix cache."""
    shards = [Shard.load(tiny_model, 0, 2), Shard.load(tiny_model, 1, 4)]
    a, b = (
        start_node(
            Key.from_seed(seed),
            shard,
            tracker_key,
            sessions=SessionManager(shard, kv_budget_bytes=8 * 2**20),
        )
        for seed, shard in zip((NODE_A_SEED, NODE_B_SEED), shards, strict=True)
    )
    try:
        yield a, b
    finally:
        a.server.stop()
        b.server.stop()


async def generate(
    a: Node, b: Node, tracker: Key, prompt: list[int], new_tokens: int, route: str
) -> tuple[list[int], list[str | None], list[dict[str, Any]]]:
    """Tokens, each hop's ``cached`` metadata on the prefill, and the receipts."""
    ticket = ticket_for(tracker, route_hops(a, b), route_session_id=route)
    max_length = len(prompt) + new_tokens
    tokens: list[int] = []
    cached: list[str | None] = []
    async with HopClient(a.url) as hop_a, HopClient(b.url) as hop_b:
        await hop_a.open(ticket, max_length)
        await hop_b.open(ticket, max_length, {"temperature": 0.0})
        x, position = torch.tensor([prompt]), 0
        for step in range(new_tokens):
            first = await hop_a.step({"input_ids": x}, position)
            reply = await hop_b.step({"hidden": first.tensors["hidden"]}, position)
            if step == 0:
                cached = [m.get(frames.CACHED_KEY) for m in (first.metadata, reply.metadata)]
                assert first.tensors["hidden"].shape == (1, len(prompt), 64)
            position += x.shape[1]
            tokens.append(int(reply.tensors["token_ids"][0]))
            x = torch.tensor([[tokens[-1]]])
        receipts = [await hop_a.close(), await hop_b.close()]
    return tokens, cached, receipts


@pytest.fixture(scope="module")
def uncached(tiny_model: Path) -> list[Shard]:
    """The same layers in one process, without any cache: the reference."""
    return [Shard.load(tiny_model, 0, 2), Shard.load(tiny_model, 2, 4)]


def reference(shards: list[Shard], prompt: list[int], new_tokens: int) -> list[int]:
    return list(generate_local(shards, prompt, new_tokens, SamplingParams()))


def test_a_repeated_prompt_is_served_from_every_hops_cache_with_the_same_tokens(
    cached_nodes: tuple[Node, Node], tracker_key: Key, uncached: list[Shard]
) -> None:
    a, b = cached_nodes
    first, cached_first, _ = asyncio.run(generate(a, b, tracker_key, PROMPT, 6, "route-pc-1"))
    assert cached_first == [None, None]
    second, cached_second, receipts = asyncio.run(
        generate(a, b, tracker_key, PROMPT, 6, "route-pc-2")
    )
    # (40 - 1) // 16 = 2 whole blocks on each hop; the rest is computed
    assert cached_second == ["32", "32"]
    assert second == first == reference(uncached, PROMPT, 6)
    for receipt, node in zip(receipts, (a, b), strict=True):
        body = verify_receipt(receipt, node.key.public)
        assert body.tokens == len(PROMPT) + 5  # every position sent, cached or not
    health = httpx.get(a.url.replace("ws", "http", 1) + "/v1/health", timeout=10).json()
    assert health["prefix_cache"]["hit_blocks"] >= 2


def test_a_prompt_whose_uncached_rest_is_one_position_still_answers_right(
    cached_nodes: tuple[Node, Node], tracker_key: Key, uncached: list[Shard]
) -> None:
    a, b = cached_nodes
    asyncio.run(generate(a, b, tracker_key, PROMPT, 1, "route-pc-3"))  # fills the caches
    prompt = PROMPT[:33]  # 2 cached blocks + 1 position: the rest runs as a decode step
    tokens, cached, _ = asyncio.run(generate(a, b, tracker_key, prompt, 4, "route-pc-4"))
    assert cached == ["32", "32"]
    assert tokens == reference(uncached, prompt, 4)
