"""Attack 8 of issue 35: "relayed" must mean the tracker's relay, and TLS to the node.

A node with a TLS pin registers ``ws://evil.example/x/relay/<id>`` (or any host
whose path merely looks like a relay's) on a tracker that refuses plaintext
nodes: it must be refused with a reason, since the tracker would otherwise dial
that host. And a session through a real relay must be TLS end to end with the
node's pin: the relay records every byte a client sends through it, and none of
them is the prompt; a relayed node presenting another key than its pin gets
nothing at all.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import httpx
import pytest

from core.dataplane.relay_link import CONNECTED, Backoff, RelayLink
from core.dataplane.tls import generate_certificate, pin_message
from tests.support.waiting import wait_until
from tests.tracker_service.conftest import make_settings, register
from tests.tracker_service.helpers import FakeNode
from tests.tracker_service.real_nodes import RealNode, assert_sessions_freed
from tests.tracker_service.relay_server import RelayThread
from tests.tracker_service.services.test_node_tls import (
    candidate,
    forms_of_prompt,
    generate_through,
    plan_over,
    tls_nodes,  # noqa: F401 (a fixture)
)
from tracker_service.app import create_app
from tracker_service.errors import RouteFailure
from tracker_service.relay import mux

TLS_RECORD_TYPES = {0x14, 0x15, 0x16, 0x17}  # change_cipher_spec, alert, handshake, data


def pinned_node(endpoint: str) -> FakeNode:
    node = FakeNode(endpoint=endpoint)
    pin = generate_certificate(node.node_id).pin
    signature = node.key.sign(pin_message(pin, node.node_id))
    node.tls_pin = (pin, base64.b64encode(signature).decode())
    return node


def test_a_relay_shaped_endpoint_on_a_strangers_host_is_refused_with_a_reason(
    tmp_path: Path,
) -> None:
    settings = make_settings(tmp_path, background_tasks=False, allow_plaintext_nodes=False)
    tracker = RelayThread(app=create_app(settings), health_path="/api/v1/state").start()
    own = f"ws://127.0.0.1:{tracker.port}/relay"
    try:
        with httpx.Client(base_url=tracker.http_url, timeout=30) as client:
            for host in ("evil.example:80", "localhost:9"):  # the second resolves: no DNS excuse
                node = pinned_node("")
                node.endpoint = f"ws://{host}/x/relay/{node.node_id}"
                refused = register(client, node)
                assert refused.status_code == 422, refused.text
                assert refused.json()["reason"] == "unknown-relay"
                assert "not a relay this tracker offers" in refused.json()["detail"]
            # A Host header naming a stranger does not make the stranger this tracker.
            node = pinned_node(f"ws://localhost:9/relay/{pinned_node('').node_id}")
            node.endpoint = f"ws://localhost:9/relay/{node.node_id}"
            spoofed = register(client, node, headers={"Host": "localhost:9"})
            assert spoofed.json()["reason"] == "unknown-relay"
            # Its own relay for another node's id is refused too.
            node.endpoint = f"{own}/{pinned_node('').node_id}"
            assert register(client, node).json()["reason"] == "unknown-relay"
            # Its own relay, for this node: admitted.
            node.endpoint = f"{own}/{node.node_id}"
            admitted = register(client, node)
            assert admitted.status_code == 200, admitted.text
            assert admitted.json()["relay"]["url"] == own
    finally:
        tracker.stop()


class RecordedRelay:
    """A real relay that keeps every payload it forwards to a node, as the relay's own
    operator (or anyone who took it over) could."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.forwarded: list[tuple[int, bytes]] = []
        encode = mux.encode

        def recording(kind: int, stream_id: int, payload: bytes = b"") -> bytes:
            self.forwarded.append((kind, bytes(payload)))
            return encode(kind, stream_id, payload)

        monkeypatch.setattr(mux, "encode", recording)
        self.relay = RelayThread().start()

    def payloads(self, kind: int) -> list[bytes]:
        return [payload for k, payload in self.forwarded if k == kind]


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Iterator[RecordedRelay]:
    held = RecordedRelay(monkeypatch)
    try:
        yield held
    finally:
        held.relay.stop()


def link_through(node: RealNode, relay: RelayThread) -> tuple[RelayLink, Future[None]]:
    """The node's link to the relay, as `meshnet-node run` makes it (TLS tunnelled)."""
    assert node.server.tls is not None and node.server.loop is not None
    link = RelayLink(
        relay.url,
        node_id=node.node_id,
        public_key=node.public_key,
        sign=node.key.sign,
        serve=node.server.serve_relayed,
        answer_get=node.server.answer_relayed_get,
        max_message_bytes=1 << 22,
        backoff=Backoff(initial_s=0.05),
        tunnel=node.server.open_tunnel,
    )
    task = asyncio.run_coroutine_threadsafe(link.run_forever(), node.server.loop)
    wait_until(lambda: link.state == CONNECTED)
    return link, task


def test_a_relayed_session_is_tls_pinned_to_the_node_and_the_relay_reads_no_prompt(
    tls_nodes: tuple[RealNode, RealNode],  # noqa: F811 (the fixture)
    recorded: RecordedRelay,
) -> None:
    a, b = tls_nodes
    direct = asyncio.run(generate_through(plan_over(candidate(a), b), plaintext=False))
    link, task = link_through(a, recorded.relay)
    try:
        relayed = candidate(a, link.endpoint)
        tokens = asyncio.run(generate_through(plan_over(relayed, b), plaintext=False))
        assert tokens == direct  # the session ran, through the relay, unchanged

        opened = recorded.payloads(mux.OPEN)
        assert opened and all(b'"/v1/tunnel"' in p for p in opened), opened
        carried = recorded.payloads(mux.BINARY) + recorded.payloads(mux.TEXT)
        assert carried and all(p[0] in TLS_RECORD_TYPES for p in carried)
        seen = b"".join(carried)
        for form in forms_of_prompt():
            assert form not in seen, f"the relay read the prompt ({form[:24]!r})"
        assert b'"ticket"' not in seen and b"open" not in seen

        # The pin is the node's: a relayed hop registered with another key gets nothing.
        recorded.forwarded.clear()
        wrong = candidate(a, link.endpoint)._replace(tls_pin=generate_certificate("x").pin)
        with pytest.raises(RouteFailure) as failed:
            asyncio.run(generate_through(plan_over(wrong, b), plaintext=False))
        assert failed.value.reason == "tls-pin-mismatch"
        sent = b"".join(recorded.payloads(mux.BINARY))
        assert b"GET /v1/session" not in sent  # not even the upgrade request was sent
        assert_sessions_freed(a, b)  # a tunnelled session ends like a direct one
    finally:
        task.cancel()
