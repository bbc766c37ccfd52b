"""Before a ticket is verified a connection may send only a small control
message, and connections are capped per address and in total: a handful of
strangers' half-sent frames cannot hold the node's memory."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from core.dataplane import wire
from core.dataplane.hop import MAX_CONTROL_BYTES
from core.dataplane.limits import ConnectionLimits
from core.dataplane.server import DataPlaneServer
from core.runtime.sessions import SessionManager
from core.runtime.shard import Shard
from tests.core.dataplane.conftest import FINGERPRINT, NODE_A_SEED, Key, ticket_for, wait_until

BIG_FRAME_BYTES = 256 * 1024  # this node's frames may be far larger than a control message


@pytest.fixture(scope="module")
def node(tiny_model: Path, tracker_key: Key) -> Iterator[tuple[DataPlaneServer, Key]]:
    key = Key.from_seed(NODE_A_SEED)
    shard = Shard.load(tiny_model, 0, 2)
    server = DataPlaneServer(
        SessionManager(shard),
        key.node_id,
        key.public,
        key.sign,
        lambda: tracker_key.public,
        FINGERPRINT,
        (0, 2),
        BIG_FRAME_BYTES,
        limits=ConnectionLimits(max_total=6, max_per_address=3),
    )
    server.start()
    try:
        yield server, key
    finally:
        server.stop()


async def closed_code(ws: ClientConnection) -> tuple[int | None, list[str]]:
    texts: list[str] = []
    try:
        while True:
            message = await asyncio.wait_for(ws.recv(), 10)
            if isinstance(message, str):
                texts.append(message)
    except ConnectionClosed as exc:
        return (exc.rcvd.code if exc.rcvd else None), texts


def test_before_a_ticket_a_big_message_ends_the_connection_unbuffered(
    node: tuple[DataPlaneServer, Key],
) -> None:
    server, _ = node

    async def scenario() -> tuple[int | None, list[str]]:
        async with connect(server.session_url, max_size=None) as ws:
            await ws.send(b"\0" * (MAX_CONTROL_BYTES + 1))
            return await closed_code(ws)

    code, _ = asyncio.run(scenario())
    assert code == wire.CLOSE_MESSAGE_TOO_BIG


def test_after_the_ticket_frames_up_to_the_node_limit_are_read(
    node: tuple[DataPlaneServer, Key], tracker_key: Key
) -> None:
    server, key = node
    hop = {"node_id": key.node_id, "start": 0, "end": 2, "effective_start": 0}

    async def scenario() -> list[str]:
        async with connect(server.session_url, max_size=None) as ws:
            opening = {"type": "open", "ticket": ticket_for(tracker_key, [hop]), "max_length": 8}
            await ws.send(json.dumps(opening))
            assert json.loads(await ws.recv())["type"] == "opened"
            await ws.send(b"\0" * (MAX_CONTROL_BYTES * 2))  # read, then refused as a frame
            _, texts = await closed_code(ws)
            return texts

    (text,) = asyncio.run(scenario())
    assert json.loads(text)["reason"] == wire.BAD_FRAME


def test_connections_over_the_per_address_cap_are_refused_with_a_reason(
    node: tuple[DataPlaneServer, Key],
) -> None:
    server, _ = node

    async def scenario() -> None:
        held = [await connect(server.session_url) for _ in range(3)]
        try:
            async with connect(server.session_url) as extra:
                _, texts = await closed_code(extra)
            assert json.loads(texts[0])["reason"] == wire.TOO_MANY_CONNECTIONS
            await held.pop().close()
            await wait_until(lambda: server.open_connections == 2)  # counted on its loop
            async with connect(server.session_url) as again:
                await again.send(json.dumps({"type": "open"}))  # served: refused for its ticket
                _, texts = await closed_code(again)
            assert json.loads(texts[0])["reason"] == wire.BAD_TICKET
        finally:
            for ws in held:
                await ws.close()

    asyncio.run(scenario())


def test_the_total_cap_holds_across_addresses() -> None:
    limits = ConnectionLimits(max_total=2, max_per_address=5)
    assert limits.refusal("10.0.0.1") is None
    assert limits.refusal("10.0.0.2") is None
    refusal = limits.refusal("10.0.0.3")
    assert refusal is not None and "limit" in refusal
    limits.release("10.0.0.1")
    assert limits.refusal("10.0.0.3") is None
    assert limits.total == 2
