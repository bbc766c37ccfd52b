"""One client pipelining hundreds of tiny decode steps must not freeze the node.

The attack: open a session, then write every step frame at once without
reading a reply. Decode steps are small enough to run on the event loop; if the
session never yields between them, the health check and every other session
wait until the whole backlog is computed. The node's health answer reports the
positions it has computed so far, so the test reads, from the node itself, how
far the flood had got when health was answered: no wall-clock assertion.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
import torch
from websockets.asyncio.client import connect
from websockets.frames import Frame, Opcode

from core.dataplane import frames, wire
from core.runtime.shard import Shard
from tests.core.dataplane.conftest import (
    NODE_A_SEED,
    Key,
    Node,
    start_node,
    ticket_for,
    wait_until,
)
from tests.tiny_llama import save_tiny_llama

FLOOD_STEPS = 600
MAX_LENGTH = FLOOD_STEPS + 8


@pytest.fixture(scope="module")
def whole_model_node(tmp_path_factory: pytest.TempPathFactory, tracker_key: Key) -> Iterator[Node]:
    """One node serving all four layers of a tiny model with room for a long flood."""
    folder = tmp_path_factory.mktemp("fair-steps-llama")
    save_tiny_llama(folder, layers=4, vocab=256, hidden=64, max_positions=1024, tie=True)
    node = start_node(Key.from_seed(NODE_A_SEED), Shard.load(folder, 0, 4), tracker_key)
    try:
        yield node
    finally:
        node.server.stop()


async def _health(node: Node) -> dict[str, object]:
    reader, writer = await asyncio.open_connection("127.0.0.1", node.server.port)
    writer.write(f"GET {wire.HEALTH_PATH} HTTP/1.1\r\nHost: node\r\n\r\n".encode())
    await writer.drain()
    raw = await reader.read()
    writer.close()
    return json.loads(raw.split(b"\r\n\r\n", 1)[1])


def _flood_bytes() -> bytes:
    """Every step frame of the flood, masked as a client sends them, in one buffer."""
    out = bytearray()
    for position in range(FLOOD_STEPS):
        data = frames.encode_frame(
            {frames.INPUT_IDS: torch.tensor([[position % 200]], dtype=torch.int64)},
            {frames.POSITION_KEY: str(position)},
        )
        out += Frame(Opcode.BINARY, data).serialize(mask=True)
    return bytes(out)


def test_pipelined_decode_steps_do_not_starve_the_health_check(
    whole_model_node: Node, tracker_key: Key
) -> None:
    node = whole_model_node
    hop = {"node_id": node.key.node_id, "start": 0, "end": 4, "effective_start": 0}
    flood = _flood_bytes()

    async def scenario() -> tuple[int, int]:
        before = int((await _health(node))["tokens_served"])  # type: ignore[call-overload]
        async with connect(node.server.session_url, max_size=None) as ws:
            open_message = {
                "type": "open",
                "ticket": ticket_for(tracker_key, [hop]),
                "max_length": MAX_LENGTH,
            }
            await ws.send(json.dumps(open_message))
            assert json.loads(await ws.recv())["type"] == "opened"
            ws.transport.write(flood)  # the whole backlog arrives in one read
            health = await _health(node)
            served_at_health = int(health["tokens_served"]) - before  # type: ignore[call-overload]
            replies = 0
            while replies < FLOOD_STEPS:
                reply = await ws.recv()
                assert isinstance(reply, bytes), reply
                replies += 1
        return served_at_health, replies

    served_at_health, replies = asyncio.run(scenario())
    assert replies == FLOOD_STEPS  # the flood itself is served in full
    # Health was answered while most of the backlog was still waiting.
    assert served_at_health < FLOOD_STEPS // 2


def test_a_departed_clients_backlog_is_dropped_not_computed(
    whole_model_node: Node, tracker_key: Key
) -> None:
    node = whole_model_node
    hop = {"node_id": node.key.node_id, "start": 0, "end": 4, "effective_start": 0}
    flood = _flood_bytes()

    async def scenario() -> int:
        before = node.server.tokens_served
        ws = await connect(node.server.session_url, max_size=None)
        opening = {
            "type": "open",
            "ticket": ticket_for(tracker_key, [hop]),
            "max_length": MAX_LENGTH,
        }
        await ws.send(json.dumps(opening))
        assert json.loads(await ws.recv())["type"] == "opened"
        ws.transport.write(flood)
        reply = await ws.recv()  # the node has started on the backlog
        assert isinstance(reply, bytes)
        ws.transport.abort()  # the client vanishes without a close
        await wait_until(lambda: node.sessions.open_count == 0)
        return node.server.tokens_served - before

    computed = asyncio.run(scenario())
    assert computed < FLOOD_STEPS // 2  # the rest of the backlog was dropped with the session
