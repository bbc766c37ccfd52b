"""Many sessions on one node: decode steps batched across sessions, prefill in chunks.

Real shard servers on loopback and real WebSocket clients: concurrent route
sessions each get exactly their solo tokens whatever shares their batches, and a
client that vanishes mid-generation affects no other session.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest
import torch

from core.dataplane.batcher import StepBatcher
from core.runtime import SessionManager, Shard, generate_local
from tests.core.dataplane.conftest import Key, Node, route_hops, ticket_for, wait_until
from tests.support.hop_client import HopClient

NEW_TOKENS = 10


def prompt(i: int) -> list[int]:
    g = torch.Generator().manual_seed(100 + i)
    return torch.randint(0, 256, (2 + 3 * i,), generator=g).tolist()


@pytest.fixture(scope="module")
def solo(tiny_model: Path) -> list[list[int]]:
    """Each prompt's greedy tokens from the same layers in one process, alone."""
    shards = [Shard.load(tiny_model, 0, 2), Shard.load(tiny_model, 2, 4)]
    return [list(generate_local(shards, prompt(i), NEW_TOKENS)) for i in range(8)]


async def chat(a: Node, b: Node, tracker: Key, i: int, abort_after: int | None = None) -> list[int]:
    ticket = ticket_for(tracker, route_hops(a, b), route_session_id=f"route-{i}")
    ids = prompt(i)
    tokens: list[int] = []
    hop_a, hop_b = HopClient(a.url), HopClient(b.url)
    try:
        await hop_a.open(ticket, len(ids) + NEW_TOKENS)
        await hop_b.open(ticket, len(ids) + NEW_TOKENS)
        x, position = torch.tensor([ids]), 0
        for _ in range(NEW_TOKENS):
            hidden = (await hop_a.step({"input_ids": x}, position)).tensors["hidden"]
            reply = await hop_b.step({"hidden": hidden}, position)
            position += x.shape[1]
            tokens.append(int(reply.tensors["token_ids"][0]))
            if abort_after is not None and len(tokens) == abort_after:
                return tokens  # the client vanishes: no close message, sockets dropped
            x = torch.tensor([[tokens[-1]]])
        await hop_a.close()
        await hop_b.close()
        return tokens
    finally:
        await hop_a.__aexit__(None, None, None)
        await hop_b.__aexit__(None, None, None)


def test_eight_concurrent_sessions_each_get_their_solo_tokens_from_shared_batches(
    nodes: tuple[Node, Node], tracker_key: Key, solo: list[list[int]]
) -> None:
    a, b = nodes

    async def main() -> list[list[int]]:
        return list(await asyncio.gather(*(chat(a, b, tracker_key, i) for i in range(8))))

    before = b.server.batch_stats.rows
    assert asyncio.run(main()) == solo
    stats = b.server.batch_stats
    assert stats.rows - before == 8 * (NEW_TOKENS - 1)  # every decode step went through it
    assert stats.largest > 1  # ...and sessions shared forwards


def test_a_client_vanishing_mid_generation_leaves_the_other_sessions_exact(
    nodes: tuple[Node, Node], tracker_key: Key, solo: list[list[int]]
) -> None:
    a, b = nodes

    async def main() -> list[list[int]]:
        runs = [chat(a, b, tracker_key, i, abort_after=3 if i == 1 else None) for i in range(4)]
        out = list(await asyncio.gather(*runs))
        await wait_until(lambda: a.sessions.open_count == 0 and b.sessions.open_count == 0)
        return out

    tokens = asyncio.run(main())
    assert tokens[1] == solo[1][:3]
    assert [tokens[i] for i in (0, 2, 3)] == [solo[i] for i in (0, 2, 3)]


def test_prefill_runs_in_chunks_with_waiting_decodes_between_them(tiny_model: Path) -> None:
    shard = Shard.load(tiny_model, 0, 4)
    manager = SessionManager(shard)
    expected = [list(generate_local([shard], prompt(i), NEW_TOKENS)) for i in range(4)]
    batcher = StepBatcher(prefill_chunk=4)

    async def decode(i: int) -> list[int]:
        session = manager.open(len(prompt(i)) + NEW_TOKENS)
        first = session.step(torch.tensor([prompt(i)])).token_ids  # prefilled before
        tokens = [int(first[0])]  # type: ignore[index]
        for _ in range(NEW_TOKENS - 1):
            result = await batcher.submit(session, torch.tensor([[tokens[-1]]]))
            tokens.append(int(result.token_ids[0]))  # type: ignore[index]
        return tokens

    async def prefill() -> list[int]:
        ids = prompt(3) * 3  # 33 positions: 9 chunks of at most 4
        session = manager.open(len(ids) + 1)
        await asyncio.sleep(0)  # the decoders' first steps are queued first
        result = await batcher.submit(session, torch.tensor([ids]))
        return [int(result.token_ids[0])]  # type: ignore[index]

    async def main() -> list[list[int]]:
        out = await asyncio.gather(decode(0), decode(1), decode(2), prefill())
        await batcher.stop()
        return list(out)

    out = asyncio.run(main())
    assert out[:3] == expected[:3]
    assert out[3] == list(generate_local([shard], prompt(3) * 3, 1))
    order = list(batcher.stats.order)
    assert order.count("P") == 9
    assert batcher.stats.largest == 3
    # while the decoders still had steps to do, no two prefill chunks ran back to back
    busy = order[: max(i for i, o in enumerate(order) if o.startswith("D"))]
    assert "P" in busy
    assert all(not (x == "P" and y == "P") for x, y in itertools.pairwise(busy))


def test_a_session_that_stops_sending_does_not_hold_back_the_one_still_decoding(
    tiny_model: Path,
) -> None:
    """Two sessions shared a batch; one's client goes quiet without closing. The other's
    next steps still run (the wait for expected company is bounded), each alone."""
    shard = Shard.load(tiny_model, 0, 4)
    manager = SessionManager(shard)
    sessions = [manager.open(16), manager.open(16)]
    batcher = StepBatcher()

    async def main() -> list[int]:
        first = await asyncio.gather(
            *(batcher.submit(s, torch.tensor([[i + 1]])) for i, s in enumerate(sessions))
        )
        tokens = [int(first[0].token_ids[0])]  # type: ignore[index]
        for _ in range(3):  # only session 0 goes on
            result = await batcher.submit(sessions[0], torch.tensor([[tokens[-1]]]))
            tokens.append(int(result.token_ids[0]))  # type: ignore[index]
        await batcher.stop()
        return tokens

    tokens = asyncio.run(main())
    assert len(tokens) == 4 and sessions[0].position == 4 and sessions[1].position == 1
    assert batcher.stats.largest == 2 and batcher.stats.rows == 5
