"""A session that fails while opening gives back everything it reserved.

Tried as an attacker would against a live node: opens whose parameters torch
rejects (a sampling seed past 64 bits) must be refused as ``bad-request`` and
must not leave KV reserved; otherwise a few such opens fill the node's budget
for good while the tracker keeps routing to it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.dataplane import wire
from core.errors import ProtocolError, RuntimeInputError
from core.runtime.sessions import SamplingParams, SessionManager
from core.runtime.shard import Shard
from tests.core.dataplane.conftest import (
    NODE_B_SEED,
    Key,
    Node,
    route_hops,
    start_node,
    ticket_for,
)
from tests.support.hop_client import HopClient

MAX_LENGTH = 16
BAD_SAMPLINGS = [
    {"temperature": 1.0, "seed": 2**64},
    {"temperature": 1.0, "seed": -(2**63) - 1},
    {"temperature": 1.0, "seed": 10**30},
    {"temperature": "hot"},
    {"top_p": 0},
]


@pytest.fixture(scope="module")
def budgeted_last(tiny_model: Path, tracker_key: Key) -> Iterator[Node]:
    """The last shard with a KV budget for exactly one session of MAX_LENGTH."""
    shard = Shard.load(tiny_model, 1, 4)
    budget = shard.kv_bytes_per_token(2) * MAX_LENGTH
    node = start_node(
        Key.from_seed(NODE_B_SEED),
        shard,
        tracker_key,
        sessions=SessionManager(shard, kv_budget_bytes=budget),
    )
    try:
        yield node
    finally:
        node.server.stop()


def _ticket(tracker: Key, node: Node) -> dict[str, object]:
    first = Key.from_seed(bytes.fromhex("22" * 32))
    hops = route_hops(Node(first, node.shard, node.sessions, node.server), node)
    return ticket_for(tracker, hops)


@pytest.mark.parametrize("sampling", BAD_SAMPLINGS, ids=lambda s: repr(s))
def test_a_failed_open_is_bad_request_and_frees_its_kv_reservation(
    budgeted_last: Node, tracker_key: Key, sampling: dict[str, object]
) -> None:
    async def scenario() -> None:
        for _ in range(3):  # a few such opens must not fill the one-session budget
            async with HopClient(budgeted_last.url) as hop:
                with pytest.raises(ProtocolError) as caught:
                    await hop.open(_ticket(tracker_key, budgeted_last), MAX_LENGTH, sampling)
            assert caught.value.reason == wire.BAD_REQUEST
        assert budgeted_last.sessions.reserved_bytes == 0
        async with HopClient(budgeted_last.url) as good:
            opened = await good.open(
                _ticket(tracker_key, budgeted_last), MAX_LENGTH, {"temperature": 1.0, "seed": 7}
            )
            assert opened["type"] == "opened"
            await good.close()

    asyncio.run(scenario())


def test_the_session_manager_releases_a_reservation_when_construction_fails(
    tiny_model: Path,
) -> None:
    shard = Shard.load(tiny_model, 1, 4)
    manager = SessionManager(shard, kv_budget_bytes=shard.kv_bytes_per_token() * MAX_LENGTH)
    for _ in range(3):
        with pytest.raises(RuntimeInputError) as caught:
            manager.open(MAX_LENGTH, sampling=SamplingParams(temperature=1.0, seed=2**64))
        assert caught.value.reason == "bad-request"
    assert manager.reserved_bytes == 0
    manager.open(MAX_LENGTH).close()
