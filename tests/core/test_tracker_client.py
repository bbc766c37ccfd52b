"""Client error paths, through httpx.MockTransport (the happy path runs against a real tracker)."""

from __future__ import annotations

import json

import httpx
import pytest

from core.errors import ReRegisterRequired, TrackerRefused, TrackerUnreachable
from core.identity.keypair import NodeIdentity
from core.identity.signing import HEADER_NODE, HEADER_SIGNATURE, verify_signed_request
from core.network import tracker_client
from core.network.tracker_client import JOIN_TOKEN_HEADER, TrackerClient

IDENTITY = NodeIdentity.from_seed(bytes(range(32)))


def _client(handler: httpx.MockTransport, **kwargs: object) -> TrackerClient:
    return TrackerClient("http://tracker.test", IDENTITY, transport=handler, **kwargs)  # type: ignore[arg-type]


def test_requests_are_signed_with_the_node_key() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"heartbeat_interval_s": 5, "live_until": 99.0})

    _client(httpx.MockTransport(handler)).heartbeat(load=0.5, open_sessions=1, tokens_served=3)
    request = seen[0]
    assert request.headers[HEADER_NODE] == IDENTITY.node_id
    headers = {
        "X-Meshnet-Timestamp": request.headers["X-Meshnet-Timestamp"],
        "X-Meshnet-Nonce": request.headers["X-Meshnet-Nonce"],
        HEADER_SIGNATURE: request.headers[HEADER_SIGNATURE],
    }
    assert verify_signed_request(
        "POST", request.url.path, request.content, headers, IDENTITY.public_key_b64
    )
    assert json.loads(request.content)["tokens_served"] == 3


def test_register_sends_join_token_when_configured() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(
            200,
            json={
                "node_id": IDENTITY.node_id,
                "tracker_public_key": "AAAA",
                "heartbeat_interval_s": 5.0,
                "recipe": {"status": "dark", "detail": "registered"},
                "session": {"credential": {"expires_at": 123.0}, "signature": "x"},
            },
        )

    registration = _client(httpx.MockTransport(handler), join_token="tok").register(
        {"schema_version": 1}, {"passed": True}, "ws://127.0.0.1:1"
    )
    assert seen[0].headers[JOIN_TOKEN_HEADER] == "tok"
    assert registration.recipe_status == "dark"
    assert registration.session_expires_at == 123.0


def _registration_bodies(relay_reason: str | None) -> dict[str, object]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(
            200,
            json={
                "node_id": IDENTITY.node_id,
                "tracker_public_key": "AAAA",
                "heartbeat_interval_s": 5,
            },
        )

    _client(httpx.MockTransport(handler)).register({}, {}, "ws://r:1/relay/x", relay_reason)
    return dict(json.loads(seen[0].content))


def test_a_relayed_registration_says_why_in_one_line_the_tracker_accepts() -> None:
    from tracker_service.api.schemas.nodes import RELAY_REASON_MAX, NodeRegisterCreate

    assert "relay_reason" not in _registration_bodies(None)  # a direct node says nothing
    assert _registration_bodies("the node was started with --relay")["relay_reason"] == (
        "the node was started with --relay"
    )
    # The tracker's dial error, quoted, can span lines and run long: one bounded line.
    said = str(
        _registration_bodies("could not dial (\n" + "refused\r\n\t" * 80 + ")")["relay_reason"]
    )
    assert len(said) <= RELAY_REASON_MAX and said.endswith("…")
    assert said.isprintable() and "  " not in said
    body = {"public_key": "k", "identity": {}, "endpoint": "ws://r:1/relay/x", "relay_reason": said}
    assert NodeRegisterCreate.model_validate(body).relay_reason == said
    assert RELAY_REASON_MAX == tracker_client.RELAY_REASON_MAX  # the node's bound is the tracker's


def test_refused_heartbeat_asks_for_re_registration() -> None:
    def handler(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(410, json={"reason": "re-register", "detail": "node expired"})

    with pytest.raises(ReRegisterRequired) as caught:
        _client(httpx.MockTransport(handler)).heartbeat(load=0, open_sessions=0, tokens_served=0)
    assert caught.value.status_code == 410
    assert "node expired" in str(caught.value)


def test_refusal_carries_the_trackers_reason_code() -> None:
    def handler(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            422, json={"detail": {"reason": "fingerprint-mismatch", "detail": "recomputed"}}
        )

    with pytest.raises(TrackerRefused) as caught:
        _client(httpx.MockTransport(handler)).register({}, {}, "ws://h:1")
    assert caught.value.reason == "fingerprint-mismatch"
    assert not isinstance(caught.value, ReRegisterRequired)


def test_connection_failure_is_unreachable_not_a_crash() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with pytest.raises(TrackerUnreachable, match="cannot reach the tracker"):
        _client(httpx.MockTransport(handler)).deregister()


def test_non_json_error_body_still_gives_a_sentence() -> None:
    def handler(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(502, text="Bad Gateway")

    with pytest.raises(TrackerRefused) as caught:
        _client(httpx.MockTransport(handler)).deregister()
    assert caught.value.reason == "http-502"
    assert "Bad Gateway" in str(caught.value)
