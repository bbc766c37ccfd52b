"""Server lifecycle: idle expiry, capacity refusals, stop, bind failures, async API."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

import pytest
import torch
from websockets.asyncio.client import connect

from core.dataplane import frames, wire
from core.dataplane.receipts import frame_digest, verify_receipt
from core.dataplane.server import DataPlaneServer
from core.errors import ConfigError, ProtocolError
from core.runtime.sessions import SessionManager
from core.runtime.shard import Shard
from tests.core.dataplane.conftest import (
    FINGERPRINT,
    NODE_A_SEED,
    Key,
    start_node,
    ticket_for,
    wait_until,
)
from tests.support.hop_client import HopClient


@pytest.fixture(scope="module")
def head(tiny_model: Path) -> Shard:
    return Shard.load(tiny_model, 0, 2)


def head_server(
    sessions: SessionManager, key: Key, tracker_key: Key, port: int = 0
) -> DataPlaneServer:
    """A data plane for the head shard [0, 2) on loopback, signed by `key`."""
    return DataPlaneServer(
        sessions,
        key.node_id,
        key.public,
        key.sign,
        lambda: tracker_key.public,
        FINGERPRINT,
        (0, 2),
        1 << 20,
        "127.0.0.1",
        port,
    )


def _hops(key: Key) -> list[dict[str, object]]:
    return [{"node_id": key.node_id, "start": 0, "end": 2, "effective_start": 0}]


def test_idle_session_is_expired_freed_and_its_client_told_why(
    head: Shard, tracker_key: Key
) -> None:
    now = [1000.0]
    sessions = SessionManager(head, idle_timeout_s=60.0, clock=lambda: now[0])
    key = Key.from_seed(NODE_A_SEED)
    node = start_node(key, head, tracker_key, sessions=sessions, expire_interval_s=0.02)

    async def scenario() -> ProtocolError:
        async with HopClient(node.url) as hop:
            await hop.open(ticket_for(tracker_key, _hops(key)), 8)
            await hop.step({"input_ids": torch.tensor([[1, 2]])}, 0)
            now[0] += 61.0
            await wait_until(lambda: sessions.open_count == 0)
            with pytest.raises(ProtocolError) as caught:
                await hop.step({"input_ids": torch.tensor([[3]])}, 2)
            return caught.value

    try:
        assert asyncio.run(scenario()).reason == wire.SESSION_EXPIRED
    finally:
        node.server.stop()
    assert sessions.reserved_bytes == 0


def test_session_over_the_kv_budget_is_refused_and_the_open_one_keeps_working(
    head: Shard, tracker_key: Key
) -> None:
    one_session = head.kv_bytes_per_token() * 16
    sessions = SessionManager(head, kv_budget_bytes=one_session)
    key = Key.from_seed(NODE_A_SEED)
    node = start_node(key, head, tracker_key, sessions=sessions)

    async def scenario() -> ProtocolError:
        ticket = ticket_for(tracker_key, _hops(key))
        async with HopClient(node.url) as good, HopClient(node.url) as second:
            await good.open(ticket, 16)
            with pytest.raises(ProtocolError) as caught:  # its own ticket: one per session
                await second.open(ticket_for(tracker_key, _hops(key)), 16)
            reply = await good.step({"input_ids": torch.tensor([[4, 5, 6]])}, 0)
            assert reply.tensors["hidden"].shape == (1, 3, head.config.hidden_size)
            await good.close()
        return caught.value

    try:
        refused = asyncio.run(scenario())
    finally:
        node.server.stop()
    assert refused.reason == wire.NO_CAPACITY
    assert "MB" in refused.message


def test_stopping_the_server_frees_every_open_session(head: Shard, tracker_key: Key) -> None:
    key = Key.from_seed(NODE_A_SEED)
    node = start_node(key, head, tracker_key)

    async def scenario() -> ProtocolError:
        async with HopClient(node.url) as hop:
            await hop.open(ticket_for(tracker_key, _hops(key)), 8)
            assert node.sessions.open_count == 1
            await asyncio.to_thread(node.server.stop)  # the node shuts down mid-session
            with pytest.raises(ProtocolError) as caught:
                await hop.step({"input_ids": torch.tensor([[1]])}, 0)
        return caught.value

    assert asyncio.run(scenario()).reason == "connection-closed"
    assert node.sessions.open_count == 0


def test_port_already_in_use_is_a_config_error_naming_the_port(
    head: Shard, tracker_key: Key
) -> None:
    key = Key.from_seed(NODE_A_SEED)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = head_server(SessionManager(head), key, tracker_key, port)
        with pytest.raises(ConfigError) as caught:
            server.start()
    assert caught.value.reason == "port-unavailable"
    assert str(port) in str(caught.value)


def test_async_api_serves_inside_the_callers_event_loop(head: Shard, tracker_key: Key) -> None:
    key = Key.from_seed(NODE_A_SEED)
    sessions = SessionManager(head)

    async def scenario() -> list[int]:
        server = head_server(sessions, key, tracker_key)
        async with server:
            assert server.port != 0 and server.url == f"ws://127.0.0.1:{server.port}"
            async with HopClient(server.url) as hop:
                opened = await hop.open(ticket_for(tracker_key, _hops(key)), 8)
                await hop.step({"input_ids": torch.tensor([[1]])}, 0)
                receipt = await hop.close()
        assert opened["node_id"] == key.node_id
        return [receipt["receipt"]["steps"], receipt["receipt"]["tokens"]]

    assert asyncio.run(scenario()) == [1, 1]
    assert sessions.open_count == 0


def test_an_interim_receipt_signs_the_steps_so_far_and_the_session_goes_on(
    head: Shard, tracker_key: Key
) -> None:
    key = Key.from_seed(NODE_A_SEED)
    sessions = SessionManager(head)

    async def scenario() -> tuple[dict[str, Any], str, dict[str, Any], dict[str, Any]]:
        server = head_server(sessions, key, tracker_key)
        async with server, HopClient(server.url) as hop:
            opened = await hop.open(ticket_for(tracker_key, _hops(key)), 8)
            reply = await hop.step_raw(
                frames.encode_frame(
                    {frames.INPUT_IDS: torch.tensor([[1, 2]])}, {frames.POSITION_KEY: "0"}
                )
            )
            await hop.send_text(json.dumps({"type": "receipt"}))
            interim = await hop._expect_text("receipt")
            await hop.step({"input_ids": torch.tensor([[3]])}, 2)  # still open
            final = await hop.close()
        return opened, frame_digest(reply), interim, final

    opened, digest, interim, final = asyncio.run(scenario())
    assert opened["interim_receipts"] is True
    assert opened["step_receipts"] is False  # not asked for: no receipt follows a reply
    body = verify_receipt(interim, key.public)
    assert (body.steps, body.tokens, body.output_sha256) == (1, 2, digest)
    assert [final["receipt"]["steps"], final["receipt"]["tokens"]] == [2, 3]
    assert sessions.open_count == 0


def test_connection_that_never_sends_open_is_ended_as_bad_frame(
    head: Shard, tracker_key: Key
) -> None:
    node = start_node(Key.from_seed(NODE_A_SEED), head, tracker_key, open_timeout_s=0.1)

    async def scenario() -> dict[str, str]:
        async with connect(node.server.session_url) as ws:
            return dict(json.loads(await ws.recv()))

    try:
        reply = asyncio.run(scenario())
    finally:
        node.server.stop()
    assert (reply["type"], reply["reason"]) == ("error", wire.BAD_FRAME)
    assert "no open message" in reply["message"]


def test_step_receipts_sign_each_reply_right_after_it_when_asked(
    head: Shard, tracker_key: Key
) -> None:
    key = Key.from_seed(NODE_A_SEED)
    sessions = SessionManager(head)

    async def scenario() -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]], Any]:
        server = head_server(sessions, key, tracker_key)
        signed: list[tuple[str, dict[str, Any]]] = []
        async with server, HopClient(server.url) as hop:
            opened = await hop.open(ticket_for(tracker_key, _hops(key)), 8, step_receipts=True)
            for position, ids in ((0, [[1, 2]]), (2, [[3]]), (3, [[4]])):
                reply = await hop.step_raw(
                    frames.encode_frame(
                        {frames.INPUT_IDS: torch.tensor(ids)}, {frames.POSITION_KEY: str(position)}
                    )
                )
                signed.append((frame_digest(reply), await hop._expect_text("step-receipt")))
            final = await hop.close()
        return opened, signed, final

    opened, signed, final = asyncio.run(scenario())
    assert opened["step_receipts"] is True
    bodies = [verify_receipt(receipt, key.public) for _, receipt in signed]
    assert [(b.steps, b.tokens) for b in bodies] == [(1, 2), (2, 3), (3, 4)]
    assert [b.output_sha256 for b in bodies] == [digest for digest, _ in signed]
    assert final["receipt"] == signed[-1][1]["receipt"]  # the close signs the same account
    assert sessions.open_count == 0


@pytest.mark.parametrize("value", ["yes", 1, None, [True]])
def test_an_open_whose_step_receipts_is_not_a_boolean_is_a_bad_request(
    head: Shard, tracker_key: Key, value: object
) -> None:
    key = Key.from_seed(NODE_A_SEED)
    sessions = SessionManager(head)

    async def scenario() -> ProtocolError:
        server = head_server(sessions, key, tracker_key)
        async with server, HopClient(server.url) as hop:
            with pytest.raises(ProtocolError) as caught:
                await hop.open(ticket_for(tracker_key, _hops(key)), 8, step_receipts=value)
            return caught.value

    refused = asyncio.run(scenario())
    assert refused.reason == wire.BAD_REQUEST and "step_receipts" in str(refused)
    assert sessions.open_count == 0 and sessions.reserved_bytes == 0
