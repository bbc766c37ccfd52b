"""The data plane over TLS pinned to node identities (issue 23), with REAL node servers.

- a recording TCP proxy between the route client (the gateway's) and the first node
  sees neither the prompt's text nor its token ids, while the same proxy in front of a
  plaintext node does (so the search is one that can succeed);
- a proxy presenting another certificate gets the hop refused with tls-pin-mismatch,
  and receives no application byte;
- a plaintext WebSocket (or HTTP request) to a TLS node port gets a 400 naming wss://;
- the tracker admits a pin only with the node's signature, refuses a node without one
  unless allowed, and publishes the pin in /api/v1/state and route plans.
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from core.dataplane.tls import generate_certificate, pin_message, server_context
from tests.tracker_service.conftest import make_settings, register
from tests.tracker_service.helpers import FakeNode
from tests.tracker_service.real_nodes import (
    NUM_LAYERS,
    WORDS,
    RealNode,
    start_real_node,
)
from tracker_service.app import create_app
from tracker_service.domain.keys import TrackerKey
from tracker_service.domain.route_formation import Candidate, form_route
from tracker_service.errors import RouteFailure
from tracker_service.services.route_planner import plan_for
from tracker_service.services.route_session import RouteSession
from tracker_service.services.session_plan import RoutePlan

TRACKER = TrackerKey.from_seed(b"\x09" * 32)
PROMPT_TEXT = "the capital of france is paris"
PROMPT = [WORDS.index(w) for w in PROMPT_TEXT.split()]


@pytest.fixture(scope="module")
def tls_nodes(tiny_model: Path) -> Iterator[tuple[RealNode, RealNode]]:
    key = TRACKER.public_key_raw
    a = start_real_node(tiny_model, 0, 2, tracker_public_key=key, tls=True)
    b = start_real_node(tiny_model, 1, 4, tracker_public_key=key, tls=True)
    try:
        yield a, b
    finally:
        a.stop()
        b.stop()


def pin_of(node: RealNode) -> str:
    assert node.server.tls is not None
    return node.server.tls.pin


def candidate(node: RealNode, endpoint: str | None = None) -> Candidate:
    pin = "" if node.server.tls is None else node.server.tls.pin
    start, end = node.shard.start, node.shard.end
    return Candidate(
        node.node_id, endpoint or node.endpoint, node.public_key, start, end, 10.0, tls_pin=pin
    )


def plan_over(first: Candidate, second: RealNode) -> RoutePlan:
    route = form_route([first, candidate(second)], NUM_LAYERS, min_nodes=2)
    return plan_for(route, second.fingerprint, TRACKER, ttl_s=60.0)


class RecordingProxy:
    """TCP in the middle: forwards both ways and keeps every byte it carried. With
    ``context`` it terminates TLS itself (another certificate) and records plaintext."""

    def __init__(self, target_port: int, context: ssl.SSLContext | None = None) -> None:
        self.target_port = target_port
        self.context = context
        self.upstream = bytearray()  # client -> node
        self.downstream = bytearray()  # node -> client
        self.server: asyncio.Server | None = None

    @property
    def recorded(self) -> bytes:
        return bytes(self.upstream + self.downstream)

    def readable(self) -> bytes:
        return readable(bytes(self.upstream)) + readable(bytes(self.downstream))

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.sockets[0].getsockname()[1])

    async def __aenter__(self) -> RecordingProxy:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.context)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_ssl = ssl._create_unverified_context() if self.context is not None else None
        try:
            up_reader, up_writer = await asyncio.open_connection(
                "127.0.0.1", self.target_port, ssl=upstream_ssl
            )
        except OSError:
            writer.close()
            return

        async def pump(
            src: asyncio.StreamReader, dst: asyncio.StreamWriter, record: bytearray
        ) -> None:
            try:
                while chunk := await src.read(65536):
                    record += chunk
                    dst.write(chunk)
                    await dst.drain()
            except (OSError, ssl.SSLError):
                pass
            finally:
                dst.close()

        await asyncio.gather(
            pump(reader, up_writer, self.upstream), pump(up_reader, writer, self.downstream)
        )


def readable(recorded: bytes) -> bytes:
    """What an observer reads off the wire: the raw bytes and, after an HTTP upgrade,
    the WebSocket payloads unmasked (a client masks its frames, which hides nothing)."""
    head = recorded.find(b"\r\n\r\n")
    if head < 0:
        return recorded
    out, pos = bytearray(recorded), head + 4
    while pos + 2 <= len(recorded):
        second = recorded[pos + 1]
        length, pos = second & 0x7F, pos + 2
        if length in (126, 127):
            width = 2 if length == 126 else 8
            length, pos = int.from_bytes(recorded[pos : pos + width], "big"), pos + width
        mask = recorded[pos : pos + 4] if second & 0x80 else b"\0\0\0\0"
        pos += 4 if second & 0x80 else 0
        payload = recorded[pos : pos + length]
        pos += length
        out += bytes(c ^ mask[k % 4] for k, c in enumerate(payload))
    return bytes(out)


def forms_of_prompt() -> list[bytes]:
    """Every byte form the prompt could take on the wire: its text, its ids as the
    frames carry them (int64 little-endian), as int32, and as JSON."""
    return [
        PROMPT_TEXT.encode(),
        np.asarray(PROMPT, dtype="<i8").tobytes(),
        np.asarray(PROMPT, dtype="<i4").tobytes(),
        json.dumps(PROMPT).encode(),
        json.dumps(PROMPT, separators=(",", ":")).encode(),
    ]


async def generate_through(plan: RoutePlan, *, plaintext: bool) -> list[int]:
    async with RouteSession(
        plan, open_timeout_s=10, step_timeout_s=30, allow_plaintext_nodes=plaintext
    ) as session:
        await session.open(len(PROMPT) + 3)
        tokens = [t.token_id async for t in session.generate(PROMPT, 3)]
        await session.close()
    return tokens


def test_recording_proxy_sees_no_prompt_through_tls(
    tls_nodes: tuple[RealNode, RealNode],
) -> None:
    a, b = tls_nodes

    async def run() -> tuple[list[int], bytes, bytes]:
        async with RecordingProxy(a.server.port) as proxy:
            first = candidate(a, f"wss://127.0.0.1:{proxy.port}")
            tokens = await generate_through(plan_over(first, b), plaintext=False)
            return tokens, proxy.recorded, proxy.readable()

    tokens, recorded, seen = asyncio.run(run())
    assert len(tokens) == 3
    assert len(recorded) > 1000  # the handshake and the session went through the proxy
    for form in forms_of_prompt():
        assert form not in seen, f"{form!r} crossed the proxy in clear"


def test_the_same_proxy_sees_the_prompt_of_a_plaintext_node(
    tiny_model: Path, tls_nodes: tuple[RealNode, RealNode]
) -> None:
    """The control: the search above finds the ids when the hop is not encrypted."""
    _, b = tls_nodes
    plain = start_real_node(tiny_model, 0, 2, tracker_public_key=TRACKER.public_key_raw)
    try:

        async def run() -> bytes:
            async with RecordingProxy(plain.server.port) as proxy:
                first = candidate(plain, f"ws://127.0.0.1:{proxy.port}")
                await generate_through(plan_over(first, b), plaintext=True)
                return proxy.readable()

        recorded = asyncio.run(run())
    finally:
        plain.stop()
    assert np.asarray(PROMPT, dtype="<i8").tobytes() in recorded


def test_a_proxy_with_another_certificate_is_refused_before_any_byte(
    tls_nodes: tuple[RealNode, RealNode],
) -> None:
    a, b = tls_nodes
    impostor = server_context(generate_certificate(a.node_id))

    async def run() -> tuple[RouteFailure, bytes]:
        async with RecordingProxy(a.server.port, context=impostor) as proxy:
            first = candidate(a, f"wss://127.0.0.1:{proxy.port}")
            with pytest.raises(RouteFailure) as failure:
                await generate_through(plan_over(first, b), plaintext=False)
            return failure.value, proxy.recorded

    failure, recorded = asyncio.run(run())
    assert failure.reason == "tls-pin-mismatch"
    assert failure.hop_index == 0
    assert recorded == b""  # not even the WebSocket upgrade reached the impostor


def test_a_node_without_a_pin_is_not_routed_by_default(
    tiny_model: Path, tls_nodes: tuple[RealNode, RealNode]
) -> None:
    _, b = tls_nodes
    plain = start_real_node(tiny_model, 0, 2, tracker_public_key=TRACKER.public_key_raw)
    try:
        plan = plan_over(candidate(plain), b)
        with pytest.raises(RouteFailure) as failure:
            asyncio.run(generate_through(plan, plaintext=False))
    finally:
        plain.stop()
    assert failure.value.reason == "tls-pin-required"


def test_plaintext_websocket_to_a_tls_port_gets_a_clear_400(
    tls_nodes: tuple[RealNode, RealNode],
) -> None:
    a, _ = tls_nodes

    async def ws_attempt() -> InvalidStatus:
        with pytest.raises(InvalidStatus) as refused:
            await connect(f"ws://127.0.0.1:{a.server.port}/v1/session", open_timeout=10)
        return refused.value

    refused = asyncio.run(ws_attempt())
    assert refused.response.status_code == 400
    body = json.loads(refused.response.body)
    assert body["reason"] == "tls-required"
    assert "wss://" in body["message"]

    with socket.create_connection(("127.0.0.1", a.server.port), timeout=10) as raw:
        raw.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = b""
        while chunk := raw.recv(4096):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400 ")
    assert b"tls-required" in answer


def test_the_tracker_admits_only_a_signed_pin_and_publishes_it(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, background_tasks=False, allow_plaintext_nodes=False)
    app = create_app(settings)
    pin = generate_certificate("x" * 32).pin
    try:
        with TestClient(app) as client:
            bare = FakeNode(endpoint="wss://127.0.0.1:9443")
            refused = register(client, bare)
            assert refused.status_code == 422
            assert refused.json()["reason"] == "tls-pin-required"

            plain = FakeNode(endpoint="ws://127.0.0.1:9444")
            assert register(client, plain).json()["reason"] == "tls-pin-required"

            forger = FakeNode(endpoint="wss://127.0.0.1:9445")
            other = FakeNode()
            stolen = other.key.sign(pin_message(pin, forger.node_id))  # not forger's key
            forger.tls_pin = (pin, base64.b64encode(stolen).decode())
            bad = register(client, forger)
            assert bad.status_code == 422
            assert bad.json()["reason"] == "bad-tls-pin"

            good = FakeNode(endpoint="wss://127.0.0.1:9446")
            signature = good.key.sign(pin_message(pin, good.node_id))
            good.tls_pin = (pin, base64.b64encode(signature).decode())
            assert register(client, good).status_code == 200
            state = client.get("/api/v1/state").json()
            published = {n["node_id"]: n["tls_pin"] for n in state["nodes"]}
            assert published[good.node_id] == pin
    finally:
        app.state.tracker.database.dispose()
