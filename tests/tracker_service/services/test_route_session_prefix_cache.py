"""The tracker's route client reads how much of a prefill the nodes' prefix caches served:
a repeated prompt through two real hops reports its cached positions, gives the same
tokens as the first run, and every receipt still verifies."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.runtime.generate import generate_local
from core.runtime.sampling import SamplingParams
from core.runtime.shard import Shard
from tests.tracker_service.real_nodes import NUM_LAYERS, RealNode, start_real_node
from tracker_service.domain.keys import TrackerKey
from tracker_service.domain.route_formation import Candidate, form_route
from tracker_service.services.route_planner import plan_for
from tracker_service.services.route_session import RouteSession
from tracker_service.services.session_plan import Sampling

PROMPT = [(7 * i + 3) % 256 for i in range(40)]
TRACKER = TrackerKey.from_seed(b"\x09" * 32)


@pytest.fixture(scope="module")
def nodes(tiny_model: Path) -> Iterator[tuple[RealNode, RealNode]]:
    """Node A [0, 2), node B [1, 4) opened at 2; a KV budget, so each keeps a prefix cache."""
    budget = 8 * 2**20
    a = start_real_node(
        tiny_model, 0, 2, tracker_public_key=TRACKER.public_key_raw, kv_budget_bytes=budget
    )
    b = start_real_node(
        tiny_model, 1, 4, tracker_public_key=TRACKER.public_key_raw, kv_budget_bytes=budget
    )
    try:
        yield a, b
    finally:
        a.stop()
        b.stop()


def candidate(node: RealNode) -> Candidate:
    return Candidate(
        node.node_id, node.endpoint, node.public_key, node.shard.start, node.shard.end, 10.0
    )


async def run(a: RealNode, b: RealNode, new_tokens: int) -> tuple[list[int], int, int]:
    """Tokens, the session's cached_tokens and the first token's ``cached``."""
    route = form_route([candidate(a), candidate(b)], NUM_LAYERS, min_nodes=2)
    plan = plan_for(route, a.fingerprint, TRACKER, ttl_s=60.0)
    async with RouteSession(plan, open_timeout_s=10, step_timeout_s=30) as session:
        await session.open(len(PROMPT) + new_tokens, Sampling(temperature=0.0))
        tokens = [t async for t in session.generate(PROMPT, new_tokens)]
        await session.close()  # verifies every receipt against what was sent
    return [t.token_id for t in tokens], session.cached_tokens, tokens[0].cached


def test_a_repeated_prompt_reports_its_cached_positions_and_keeps_its_tokens(
    nodes: tuple[RealNode, RealNode], tiny_model: Path
) -> None:
    a, b = nodes
    first, cached_first, _ = asyncio.run(run(a, b, 5))
    second, cached_second, first_token_cached = asyncio.run(run(a, b, 5))
    assert cached_first == 0
    assert cached_second == first_token_cached == 32  # (40 - 1) // 16 whole blocks
    shards = [Shard.load(tiny_model, 0, 2), Shard.load(tiny_model, 2, 4)]
    assert first == second == list(generate_local(shards, PROMPT, 5, SamplingParams()))


def test_a_reply_without_a_count_or_with_a_bad_one_reads_as_nothing_cached() -> None:
    from tracker_service.domain import wire_frames

    def reply(metadata: dict[str, str]) -> bytes:
        return wire_frames.encode({}, metadata)

    assert wire_frames.cached_of(reply({"compute_ms": "1.0"}), 1024) == 0
    assert wire_frames.cached_of(reply({"cached": "32"}), 1024) == 32
    for bad in ("-3", "1e9", "x", "", "\u0663"):
        assert wire_frames.cached_of(reply({"cached": bad}), 1024) == 0
