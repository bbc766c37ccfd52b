"""Decode groups that drifted apart merge again at the route's head (batcher.py).

Two schedules, a head shard and a tail shard, each on its own event loop in its
own thread as on two nodes, driven the way a route client drives them: each
session's step goes to the head, its hidden states to the tail, its token back
to the head. The merge bound is set very high so what is checked is the rule
(who waits for whom), never a timing.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import torch

from core.dataplane.batcher import StepBatcher
from core.runtime import SessionManager, Shard, generate_local
from core.runtime.sessions import InferenceSession

T = TypeVar("T")
NEW_TOKENS = 12
PATIENT = 1000.0  # merge bound, x the compute time: seconds here, never reached


def prompt(i: int) -> list[int]:
    g = torch.Generator().manual_seed(200 + i)
    return torch.randint(0, 256, (3 + 2 * i,), generator=g).tolist()


@pytest.fixture(scope="module")
def shards(tiny_model: Path) -> tuple[Shard, Shard]:
    return Shard.load(tiny_model, 0, 2), Shard.load(tiny_model, 2, 4)


def decode_sizes(batcher: StepBatcher) -> list[int]:
    return [int(o[1:]) for o in batcher.stats.order if o.startswith("D")]


class Node:
    """A schedule on its own event loop in its own thread, like another process."""

    def __init__(self, batcher: StepBatcher) -> None:
        self.batcher = batcher
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    async def call(self, work: Coroutine[Any, Any, T]) -> T:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self.loop))

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.batcher.stop(), self.loop).result(60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(60)
        self.loop.close()


@pytest.fixture
def two_nodes() -> Iterator[tuple[Node, Node]]:
    head, tail = Node(StepBatcher(merge_wait=PATIENT)), Node(StepBatcher())
    yield head, tail
    head.close()
    tail.close()


def test_a_split_of_six_and_two_merges_into_one_batch_of_eight_at_the_head(
    shards: tuple[Shard, Shard], two_nodes: tuple[Node, Node]
) -> None:
    head_shard, tail_shard = shards
    heads, tails = SessionManager(head_shard), SessionManager(tail_shard)
    head, tail = two_nodes

    async def chat(i: int, late_start: asyncio.Event) -> list[int]:
        ids = prompt(i)
        a, b = heads.open(len(ids) + NEW_TOKENS), tails.open(len(ids) + NEW_TOKENS)
        hidden = a.step(torch.tensor([ids])).hidden  # prefilled before the decode starts
        tokens = [int(b.step(hidden).token_ids[0])]  # type: ignore[arg-type, index]
        if i >= 6:  # the late pair starts while the early six are at the tail
            await late_start.wait()
        for step in range(NEW_TOKENS - 1):
            x = torch.tensor([[tokens[-1]]])
            hidden = (await head.call(head.batcher.submit(a, x))).hidden
            if i == 0 and step == 2:
                late_start.set()
            result = await tail.call(tail.batcher.submit(b, hidden))  # type: ignore[arg-type]
            tokens.append(int(result.token_ids[0]))  # type: ignore[index]
        for manager, node, session in ((heads, head, a), (tails, tail, b)):
            manager.close(session.session_id)  # as the hop does at the end of a session
            node.loop.call_soon_threadsafe(node.batcher.wake)
        return tokens

    async def main() -> list[list[int]]:
        late_start = asyncio.Event()
        return list(await asyncio.gather(*(chat(i, late_start) for i in range(8))))

    tokens = asyncio.run(main())
    assert tokens == [list(generate_local(shards, prompt(i), NEW_TOKENS)) for i in range(8)]
    # The rule is the head's: it waits (without bound, here) for every mid-decode session.
    sizes = decode_sizes(head.batcher)
    merged = sizes.index(8)  # the late pair started at the early six's 4th step
    assert merged <= 6, sizes
    # ...and from then on one batch of all eight until the early six finish
    together = len(list(itertools.takewhile(lambda n: n == 8, sizes[merged:])))
    assert together >= NEW_TOKENS - 1 - 6, sizes
    # The tail waits only a straggler's moment (half a forward), so whether eight frames
    # that left the head together land in one batch there is a matter of thread timing on
    # a loaded machine: what holds is that it computed every step exactly once.
    assert tail.batcher.stats.rows == head.batcher.stats.rows == 8 * (NEW_TOKENS - 1)


def test_a_lone_session_never_waits_and_a_released_one_is_not_waited_for(
    shards: tuple[Shard, Shard],
) -> None:
    """With a bound no test would sit out, steps still complete: nobody waits for a lone
    session's company, and a session that closes ends the wait for it at once."""
    manager = SessionManager(shards[0])
    batcher = StepBatcher(merge_wait=1e9)
    sessions = [manager.open(16), manager.open(16)]

    async def steps(session: InferenceSession, n: int) -> None:
        for _ in range(n):
            await batcher.submit(session, torch.tensor([[7]]))

    async def main() -> None:
        await asyncio.wait_for(steps(sessions[0], 2), 60)  # alone: no company to wait for
        await asyncio.gather(*(batcher.submit(s, torch.tensor([[5]])) for s in sessions))
        waiting = asyncio.ensure_future(steps(sessions[0], 1))  # waits for session 1's step
        for _ in range(3):
            await asyncio.sleep(0)
        manager.close(sessions[1].session_id)
        batcher.wake()  # as the hop does when it releases a session
        await asyncio.wait_for(waiting, 60)
        await batcher.stop()

    asyncio.run(main())
    order = list(batcher.stats.order)
    assert order == ["D1", "D1", "D2", "D1"]
    assert sessions[0].position == 4 and sessions[1].position == 1
