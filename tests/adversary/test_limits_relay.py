"""One client against a relayed node: its streams are capped per client address.

The relay took 1,024 streams per node with no per-client cap, so one client
reconnecting every 30 s kept a relayed node unreachable for everyone else. A real
relay (uvicorn) here, a node's real signed link, and clients from two loopback
addresses.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tests.tracker_service.relay.test_relay_parts import FakeKey
from tests.tracker_service.relay.test_relay_reason_and_caps import _link
from tests.tracker_service.relay_server import RelayThread
from tracker_service.relay.hub import TRY_AGAIN_LATER, RelaySettings

PER_CLIENT = 3
POLL_S = 30.0


async def _until(predicate: Any, what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + POLL_S
    while not predicate():
        assert loop.time() < deadline, f"gave up waiting for {what}"
        await asyncio.sleep(0.02)


async def _stream(relay: RelayThread, node_id: str, source: str) -> ClientConnection:
    return await connect(f"{relay.url}/{node_id}/v1/session", local_addr=(source, 0))


def test_one_client_cannot_take_all_of_a_relayed_nodes_streams() -> None:
    settings = RelaySettings(max_streams_per_node=64, max_streams_per_client=PER_CLIENT)
    relay = RelayThread(settings).start()
    hub = relay.hub
    assert hub is not None

    async def scenario() -> None:
        key = FakeKey()
        node = await _link(relay, key)
        held: list[ClientConnection] = [node]
        try:
            await _until(lambda: hub.link_of(key.node_id) is not None, "the node's link")
            link = hub.link_of(key.node_id)
            assert link is not None
            # The abuser opens its share, then one more.
            for _ in range(PER_CLIENT):
                held.append(await _stream(relay, key.node_id, "127.0.0.1"))
            await _until(lambda: len(link.streams) == PER_CLIENT, "the abuser's streams")
            extra = await _stream(relay, key.node_id, "127.0.0.1")
            held.append(extra)
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(extra.recv(), POLL_S)
            assert closed.value.rcvd is not None
            assert closed.value.rcvd.code == TRY_AGAIN_LATER
            assert "limit per client address" in closed.value.rcvd.reason
            # Someone else still reaches the node.
            held.append(await _stream(relay, key.node_id, "127.0.0.2"))
            await _until(lambda: len(link.streams) == PER_CLIENT + 1, "the other client")
            assert {s.client for s in link.streams.values()} == {"127.0.0.1", "127.0.0.2"}
        finally:
            for ws in held:
                await ws.close()

    try:
        asyncio.run(scenario())
    finally:
        relay.stop()
