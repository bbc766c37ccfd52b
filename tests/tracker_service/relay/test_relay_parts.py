"""The relay's pure parts: the mux header (pinned to the node's copy), the link
handshake's refusals, the bandwidth cap's schedule, and the node's back-off."""

from __future__ import annotations

import asyncio
import base64
import random

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from core.dataplane import relay_mux as node_mux
from core.dataplane.relay_link import Backoff, link_headers, relay_endpoint
from core.errors import ProtocolError
from tracker_service.domain.wire import node_id_for
from tracker_service.errors import RelayLinkRefused
from tracker_service.relay import mux
from tracker_service.relay.bandwidth import ByteBucket
from tracker_service.relay.directory import RelayDirectory, relay_of
from tracker_service.relay.link_auth import HEADER_PUBLIC_KEY, LinkAuthenticator

LINK_URL = "ws://relay.example:8766/relay/v1/link"


class FakeKey:
    def __init__(self) -> None:
        self.private = Ed25519PrivateKey.generate()
        self.public = self.private.public_key().public_bytes_raw()
        self.node_id = node_id_for(self.public)

    def headers(self, now: float) -> dict[str, str]:
        return link_headers(LINK_URL, self.node_id, self.public, self.private.sign, now=now)


# -- the mux header ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "stream_id", "payload"),
    [
        (mux.OPEN, 1, mux.open_payload("/v1/session", "10.0.0.1")),
        (mux.TEXT, 7, b'{"type":"open"}'),
        (mux.BINARY, 2**32 - 1, bytes(range(256))),
        (mux.CLOSE, 3, mux.close_payload(1008, "bad-ticket")),
        (mux.HTTP, 4, b"/v1/challenge?nonce=ab"),
        (mux.REPLY, 5, node_mux.reply_payload(200, {"Content-Type": "x"}, b"body")),
    ],
)
def test_the_node_and_the_relay_write_and_read_the_same_mux_bytes(
    kind: int, stream_id: int, payload: bytes
) -> None:
    relay_bytes = mux.encode(kind, stream_id, payload)
    assert node_mux.encode(kind, stream_id, payload) == relay_bytes
    assert node_mux.decode(relay_bytes) == (kind, stream_id, payload)
    assert mux.decode(relay_bytes) == mux.Frame(kind, stream_id, payload)


def test_close_open_and_reply_payloads_round_trip_across_the_two_copies() -> None:
    assert node_mux.parse_close(mux.close_payload(1009, "too big")) == (1009, "too big")
    assert mux.parse_close(node_mux.close_payload(1000, "")) == (1000, "")
    assert node_mux.parse_open(mux.open_payload("/v1/session", "1.2.3.4")) == (
        "/v1/session",
        "1.2.3.4",
    )
    reply = node_mux.reply_payload(404, {"Content-Type": "application/json"}, b"{}")
    assert mux.parse_reply(reply) == (404, {"Content-Type": "application/json"}, b"{}")


@pytest.mark.parametrize("message", [b"", b"\x02\x00\x00", b"\x09\x00\x00\x00\x01data"])
def test_a_message_that_is_no_mux_frame_is_refused_by_both_copies(message: bytes) -> None:
    with pytest.raises(mux.MuxError):
        mux.decode(message)
    with pytest.raises(ProtocolError):
        node_mux.decode(message)


@pytest.mark.parametrize(
    "payload", [b"\x00", b"\x00\xc8\x00\x05[1,2", b"\x00\xc8\x00\x02[]", b"\x03\xe7\x00\x02{}"]
)
def test_a_malformed_http_reply_is_a_mux_error(payload: bytes) -> None:
    with pytest.raises(mux.MuxError):
        mux.parse_reply(payload)


# -- the handshake ----------------------------------------------------------------------


def test_a_signed_link_request_authenticates_its_node_once() -> None:
    key, auth = FakeKey(), LinkAuthenticator(clock=lambda: 1_000_000.0)
    headers = key.headers(1_000_000.0)
    assert auth.verify("GET", "/relay/v1/link", headers) == key.node_id
    with pytest.raises(RelayLinkRefused, match="replay"):
        auth.verify("GET", "/relay/v1/link", headers)


def test_link_requests_that_do_not_authenticate_are_refused_with_why() -> None:
    key, other = FakeKey(), FakeKey()
    auth = LinkAuthenticator(clock=lambda: 1_000_000.0)
    stale = key.headers(1_000_000.0 - 3600)
    with pytest.raises(RelayLinkRefused, match="clock"):
        auth.verify("GET", "/relay/v1/link", stale)
    wrong_path = key.headers(1_000_000.0)
    with pytest.raises(RelayLinkRefused, match="signature"):
        auth.verify("GET", "/relay/other", wrong_path)
    borrowed = key.headers(1_000_000.0)
    borrowed[HEADER_PUBLIC_KEY] = base64.b64encode(other.public).decode()
    with pytest.raises(RelayLinkRefused, match="hash of the public key"):
        auth.verify("GET", "/relay/v1/link", borrowed)
    missing = key.headers(1_000_000.0)
    del missing["X-Meshnet-Signature"]
    with pytest.raises(RelayLinkRefused, match="X-Meshnet-Signature"):
        auth.verify("GET", "/relay/v1/link", missing)


# -- bandwidth --------------------------------------------------------------------------


def test_the_bandwidth_cap_delays_bytes_past_the_burst_at_the_set_rate() -> None:
    now = [0.0]
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    bucket = ByteBucket(1000.0, 1000.0, clock=lambda: now[0], sleep=sleep)

    async def run() -> list[float]:
        return [await bucket.take(n) for n in (1000, 500, 500, 2000)]

    delays = asyncio.run(run())
    assert delays == pytest.approx([0.0, 0.5, 0.5, 2.0])
    assert slept == pytest.approx([0.5, 0.5, 2.0])
    assert bucket.waited_s == pytest.approx(3.0)
    now[0] += 10.0  # idle time refills up to the burst, not beyond
    assert bucket.delay_for(1000) == 0.0
    assert bucket.delay_for(1) > 0.0


def test_a_zero_rate_means_no_cap() -> None:
    bucket = ByteBucket(0.0)
    assert bucket.delay_for(10**9) == 0.0
    assert asyncio.run(bucket.take(10**9)) == 0.0


# -- back-off ---------------------------------------------------------------------------


def test_back_off_doubles_to_its_ceiling_with_bounded_jitter_and_resets() -> None:
    backoff = Backoff(initial_s=0.5, maximum_s=4.0, jitter=0.2, rng=random.Random(7))
    delays = [backoff.next() for _ in range(6)]
    for delay, base in zip(delays, [0.5, 1.0, 2.0, 4.0, 4.0, 4.0], strict=True):
        assert base * 0.8 <= delay <= base * 1.2
    backoff.reset()
    assert 0.4 <= backoff.next() <= 0.6


# -- the directory ----------------------------------------------------------------------


def test_relayed_endpoints_are_told_apart_from_direct_ones() -> None:
    node = "ab" * 16
    assert (
        relay_of(relay_endpoint("ws://r.example:8766/relay", node)) == "ws://r.example:8766/relay"
    )
    assert relay_of("ws://1.2.3.4:7000") is None
    assert relay_of("ws://r.example:8766/relay/not-a-node") is None


def test_the_tracker_offers_its_own_relay_or_spreads_nodes_over_listed_ones() -> None:
    own = RelayDirectory.from_setting("", embedded=True)
    assert own.offer("ab" * 16, "http://t.example:8765/") == "ws://t.example:8765/relay"
    assert own.known("ws://t.example:8765/relay/" + "ab" * 16, "http://t.example:8765/")
    assert not own.known("ws://evil.example:1/relay/" + "ab" * 16, "http://t.example:8765/")
    assert RelayDirectory.from_setting("", embedded=False).offer("x", "http://t:1/") is None
    listed = RelayDirectory.from_setting("ws://a:1/relay, ws://b:2/relay", embedded=True)
    offers = {listed.offer(f"{i:032x}", "http://t:1/") for i in range(20)}
    assert offers == {"ws://a:1/relay", "ws://b:2/relay"}


def test_only_a_relayed_endpoint_keeps_its_path_when_dialled() -> None:
    from tracker_service.services.reachability import challenge_url, http_base

    node = "ab" * 16
    assert http_base(f"ws://r:1/relay/{node}") == f"http://r:1/relay/{node}"
    assert challenge_url(f"wss://r:443/relay/{node}", "cd") == (
        f"https://r:443/relay/{node}/v1/challenge?nonce=cd"
    )
    assert http_base("ws://10.0.0.2:7000/x") == "http://10.0.0.2:7000"
