"""A node's data plane served through a real relay (uvicorn + the relay app) on loopback.

The relayed hop runs the same session handler as a direct one: same tokens,
receipts signed by the node, the same refusals. Faults stay local: a node's bad
frame ends its own link, a client's oversize frame its own stream; a relay
that goes away is reconnected to when it comes back.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import torch
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from core.dataplane import relay_mux
from core.dataplane.challenge import verify_challenge
from core.dataplane.receipts import verify_receipt
from core.dataplane.relay_link import CONNECTED, RECONNECTING, Backoff, RelayLink, link_headers
from core.errors import ProtocolError
from core.runtime.generate import generate_local
from core.runtime.sampling import SamplingParams
from core.runtime.shard import Shard
from tests.core.dataplane.conftest import (
    MAX_FRAME_BYTES,
    Key,
    Node,
    route_hops,
    ticket_for,
    wait_until,
)
from tests.support.hop_client import HopClient
from tests.tracker_service.relay_server import RelayThread
from tracker_service.domain.wire import node_id_for
from tracker_service.relay.hub import RelaySettings

PROMPT = [5, 17, 99, 3, 250, 41]


class Linked:
    """Node A's link to a relay, run on A's own server loop as the node does."""

    def __init__(self, node: Node, relay: RelayThread) -> None:
        self.node = node
        self.states: list[str] = []
        self.link = RelayLink(
            relay.url,
            node_id=node.key.node_id,
            public_key=node.key.public,
            sign=node.key.sign,
            serve=node.server.serve_relayed,
            answer_get=node.server.answer_relayed_get,
            max_message_bytes=4 * MAX_FRAME_BYTES,
            on_state=lambda state, _sentence: self.states.append(state),
            backoff=Backoff(initial_s=0.05, maximum_s=0.5),
        )
        loop = node.server.loop
        assert loop is not None
        self.task = asyncio.run_coroutine_threadsafe(self.link.run_forever(), loop)
        wait_sync(lambda: self.link.state == CONNECTED, "the link to come up")

    def stop(self) -> None:
        self.task.cancel()
        with pytest.raises(BaseException):  # noqa: B017 (cancelled, whichever way it says so)
            self.task.result(10)


def wait_sync(predicate: Any, what: str, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


@pytest.fixture(scope="module")
def relay() -> Iterator[RelayThread]:
    running = RelayThread().start()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def linked(nodes: tuple[Node, Node], relay: RelayThread) -> Iterator[Linked]:
    held = Linked(nodes[0], relay)
    try:
        yield held
    finally:
        held.stop()


async def generate(
    url_a: str, url_b: str, a: Node, b: Node, tracker: Key, new_tokens: int
) -> tuple[list[int], list[dict[str, Any]]]:
    ticket = ticket_for(tracker, route_hops(a, b), route_session_id=secrets.token_hex(8))
    tokens: list[int] = []
    async with HopClient(url_a) as hop_a, HopClient(url_b) as hop_b:
        assert (await hop_a.open(ticket, len(PROMPT) + new_tokens))["layers"] == [0, 2]
        await hop_b.open(ticket, len(PROMPT) + new_tokens, {"temperature": 0.0})
        x, position = torch.tensor([PROMPT]), 0
        for _ in range(new_tokens):
            hidden = (await hop_a.step({"input_ids": x}, position)).tensors["hidden"]
            reply = await hop_b.step({"hidden": hidden}, position)
            position += x.shape[1]
            tokens.append(int(reply.tensors["token_ids"][0]))
            x = torch.tensor([[tokens[-1]]])
        receipts = [await hop_a.close(), await hop_b.close()]
    return tokens, receipts


def test_a_relayed_hop_generates_what_a_direct_hop_does_with_receipts_signed_by_the_node(
    nodes: tuple[Node, Node], tracker_key: Key, linked: Linked, tiny_model: Any
) -> None:
    a, b = nodes
    direct, _ = asyncio.run(generate(a.url, b.url, a, b, tracker_key, 6))
    relayed, receipts = asyncio.run(generate(linked.link.endpoint, b.url, a, b, tracker_key, 6))
    local = list(
        generate_local(
            [a.shard, Shard.load(tiny_model, 2, 4)], PROMPT, 6, SamplingParams(temperature=0.0)
        )
    )
    assert relayed == direct == local
    receipt = verify_receipt(receipts[0], a.key.public)  # signed at the node, not the relay
    assert receipt.node_id == a.key.node_id and receipt.steps == 6
    tampered = {**receipts[0], "receipt": {**receipts[0]["receipt"], "tokens": 999}}
    with pytest.raises(ProtocolError):
        verify_receipt(tampered, a.key.public)


def test_plain_gets_reach_the_node_through_the_relay(
    nodes: tuple[Node, Node], linked: Linked, relay: RelayThread
) -> None:
    a = nodes[0]
    base = f"{relay.http_url}/relay/{a.key.node_id}"
    nonce = secrets.token_hex(16)
    answer = httpx.get(f"{base}/v1/challenge", params={"nonce": nonce}, timeout=10)
    assert answer.status_code == 200
    assert verify_challenge(answer.json(), nonce, a.key.node_id) == a.key.public
    health = httpx.get(f"{base}/v1/health", timeout=10).json()
    assert health["node_id"] == a.key.node_id
    tokenizer = httpx.get(f"{base}/v1/tokenizer", timeout=10)
    assert tokenizer.status_code == 200 and "X-Meshnet-Sha256" in tokenizer.headers
    assert httpx.get(f"{base}/v1/nothing", timeout=10).status_code == 404


def test_a_node_without_a_link_is_refused_with_404(relay: RelayThread) -> None:
    absent = "0" * 32
    reply = httpx.get(f"{relay.http_url}/relay/{absent}/v1/health", timeout=10)
    assert reply.status_code == 404 and reply.json()["detail"]["reason"] == "not-relayed"

    async def dial() -> None:
        async with connect(f"{relay.url}/{absent}/v1/session"):
            pass

    with pytest.raises(InvalidStatus) as refused:
        asyncio.run(dial())
    assert refused.value.response.status_code == 404


def test_a_link_that_does_not_authenticate_is_refused_with_401(relay: RelayThread) -> None:
    key = Ed25519PrivateKey.generate()
    public = key.public_key().public_bytes_raw()
    impostor = Ed25519PrivateKey.generate()  # signs for a node id that is not its own
    link_url = relay.url + "/v1/link"
    headers = link_headers(link_url, node_id_for(public), public, impostor.sign)

    async def dial() -> None:
        async with connect(link_url, additional_headers=headers):
            pass

    with pytest.raises(InvalidStatus) as refused:
        asyncio.run(dial())
    assert refused.value.response.status_code == 401
    assert b"signature" in refused.value.response.body


@pytest.mark.parametrize("bad", [b"\x09\x00\x00\x00\x01junk", b"\x01\x00", "text on a binary link"])
def test_a_bad_frame_from_a_node_ends_its_own_link_and_nothing_else(
    nodes: tuple[Node, Node], tracker_key: Key, linked: Linked, relay: RelayThread, bad: Any
) -> None:
    key = Ed25519PrivateKey.generate()
    public = key.public_key().public_bytes_raw()
    link_url = relay.url + "/v1/link"

    async def misbehave() -> int:
        headers = link_headers(link_url, node_id_for(public), public, key.sign)
        async with connect(link_url, additional_headers=headers) as ws:
            await ws.send(bad)
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 10)
            assert closed.value.rcvd is not None
            return closed.value.rcvd.code

    assert asyncio.run(misbehave()) in (1002, 1003)
    a, b = nodes  # the relay and the honest node's link carry on
    tokens, _ = asyncio.run(generate(linked.link.endpoint, b.url, a, b, tracker_key, 2))
    assert len(tokens) == 2
    assert relay.metric("meshnet_relay_bad_frames_total") >= 1


def test_a_client_frame_over_the_cap_ends_only_its_stream(
    nodes: tuple[Node, Node], tracker_key: Key, linked: Linked
) -> None:
    a, b = nodes

    async def run() -> tuple[str | None, list[int]]:
        ticket = ticket_for(tracker_key, route_hops(a, b), route_session_id=secrets.token_hex(8))
        async with HopClient(linked.link.endpoint) as greedy:
            await greedy.open(ticket, 16)
            honest = asyncio.create_task(
                generate(linked.link.endpoint, b.url, a, b, tracker_key, 3)
            )
            try:
                await greedy.step_raw(b"\x00" * (4 * MAX_FRAME_BYTES + 1))
                reason = None
            except ProtocolError as exc:
                reason = exc.reason
            tokens, _ = await honest
        return reason, tokens

    reason, tokens = asyncio.run(run())
    assert reason in ("frame-too-large", "bad-frame")
    assert len(tokens) == 3
    asyncio.run(wait_until(lambda: a.sessions.open_count == 0))


def test_the_node_reconnects_when_its_relay_comes_back_and_frees_cut_sessions(
    nodes: tuple[Node, Node], tracker_key: Key
) -> None:
    a, b = nodes
    first = RelayThread().start()
    held = Linked(a, first)
    try:

        async def cut_mid_session() -> str:
            ticket = ticket_for(tracker_key, route_hops(a, b), route_session_id="cut")
            async with HopClient(held.link.endpoint) as hop:
                await hop.open(ticket, 16)
                await hop.step({"input_ids": torch.tensor([PROMPT])}, 0)
                first.stop()  # the relay goes away mid-session
                try:
                    await hop.step({"input_ids": torch.tensor([[7]])}, len(PROMPT))
                except ProtocolError as exc:
                    return exc.reason
            return "no error"

        assert asyncio.run(cut_mid_session()) == "connection-closed"
        wait_sync(lambda: held.link.state == RECONNECTING, "the link to notice")
        asyncio.run(wait_until(lambda: a.sessions.open_count == 0))  # the KV is freed
        second = RelayThread(port=first.port).start()  # a relay is back on the same address
        try:
            wait_sync(lambda: held.link.connects == 2, "the node to reconnect")
            tokens, _ = asyncio.run(generate(held.link.endpoint, b.url, a, b, tracker_key, 2))
            assert len(tokens) == 2
        finally:
            second.stop()
    finally:
        held.stop()
        first.stop()
    assert held.states[:2] == [CONNECTED, RECONNECTING] and CONNECTED in held.states[2:]


def test_the_bandwidth_cap_delays_a_nodes_replies_without_losing_bytes() -> None:
    capped = RelayThread(RelaySettings(node_bytes_per_s=50_000, node_burst_bytes=50_000)).start()
    key = Ed25519PrivateKey.generate()
    public = key.public_key().public_bytes_raw()
    node_id = node_id_for(public)
    body = bytes(range(256)) * 400  # 100 KB: twice the burst

    async def fake_node(ready: asyncio.Event) -> None:
        url = capped.url + "/v1/link"
        async with connect(
            url, additional_headers=link_headers(url, node_id, public, key.sign)
        ) as ws:
            ready.set()
            message = await ws.recv()
            assert isinstance(message, bytes)
            kind, stream_id, _ = relay_mux.decode(message)
            assert kind == relay_mux.HTTP
            payload = relay_mux.reply_payload(200, {"Content-Type": "application/x"}, body)
            await ws.send(relay_mux.encode(relay_mux.REPLY, stream_id, payload))
            await asyncio.sleep(5)

    async def run() -> bytes:
        ready = asyncio.Event()
        node = asyncio.create_task(fake_node(ready))
        await ready.wait()
        async with httpx.AsyncClient() as http:
            reply = await http.get(f"{capped.http_url}/relay/{node_id}/v1/big", timeout=30)
        node.cancel()
        return reply.content

    try:
        assert asyncio.run(run()) == body
        assert capped.metric("meshnet_relay_throttled_seconds_total") > 0
    finally:
        capped.stop()


def test_a_malformed_http_reply_from_a_node_is_a_502_and_its_link_stays_up() -> None:
    relay = RelayThread().start()
    key = Ed25519PrivateKey.generate()
    public = key.public_key().public_bytes_raw()
    node_id = node_id_for(public)

    async def run() -> tuple[int, int, bool]:
        url = relay.url + "/v1/link"
        headers = link_headers(url, node_id, public, key.sign)
        async with connect(url, additional_headers=headers) as ws:

            async def answer_badly() -> None:
                for _ in range(2):
                    kind, stream_id, _ = relay_mux.decode(await ws.recv())  # type: ignore[arg-type]
                    assert kind == relay_mux.HTTP
                    await ws.send(relay_mux.encode(relay_mux.REPLY, stream_id, b"\x00"))

            node = asyncio.create_task(answer_badly())
            async with httpx.AsyncClient() as http:
                first = await http.get(f"{relay.http_url}/relay/{node_id}/v1/health", timeout=20)
                second = await http.get(f"{relay.http_url}/relay/{node_id}/v1/health", timeout=20)
            await node
            return (
                first.status_code,
                second.status_code,
                relay.hub is not None and (node_id in relay.hub.links),
            )

    try:
        assert asyncio.run(run()) == (502, 502, True)
    finally:
        relay.stop()


def test_garbage_from_the_relay_is_ignored_by_the_node(nodes: tuple[Node, Node]) -> None:
    a = nodes[0]
    link = RelayLink(
        "ws://127.0.0.1:9/relay",
        node_id=a.key.node_id,
        public_key=a.key.public,
        sign=a.key.sign,
        serve=a.server.serve_relayed,
        answer_get=a.server.answer_relayed_get,
        max_message_bytes=MAX_FRAME_BYTES,
    )

    async def feed() -> None:
        for junk in (b"", b"\x09\x00\x00\x00\x01", relay_mux.encode(relay_mux.OPEN, 1, b"{")):
            await link._dispatch(junk)
        # data and closes for streams that do not exist change nothing
        await link._dispatch(relay_mux.encode(relay_mux.BINARY, 99, b"x"))
        await link._dispatch(relay_mux.encode(relay_mux.CLOSE, 99, b""))

    asyncio.run(feed())
    assert link._streams == {}


def test_a_newer_link_of_the_same_node_replaces_the_older_one() -> None:
    relay = RelayThread().start()
    key = Ed25519PrivateKey.generate()
    public = key.public_key().public_bytes_raw()
    url = relay.url + "/v1/link"

    async def run() -> int:
        node_id = node_id_for(public)
        async with connect(
            url, additional_headers=link_headers(url, node_id, public, key.sign)
        ) as old:
            new_headers = link_headers(url, node_id, public, key.sign)
            async with connect(url, additional_headers=new_headers):
                with pytest.raises(ConnectionClosed) as closed:
                    await asyncio.wait_for(old.recv(), 10)
                assert closed.value.rcvd is not None
                return closed.value.rcvd.code

    try:
        assert asyncio.run(run()) == 1012  # service restart: the node's newer link wins
        assert relay.metric('meshnet_relay_links_total{outcome="replaced"}') == 1
    finally:
        relay.stop()
