"""Endpoints the tracker dials: ws/wss to public addresses only, unless the
operator allows private ones; refused at registration with a reason; the name
is resolved once and the dial goes to that address (no DNS rebinding)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.tracker_service.conftest import make_settings, register
from tests.tracker_service.helpers import FakeNode
from tracker_service.app import create_app
from tracker_service.errors import EndpointRefused
from tracker_service.security.endpoint_policy import ResolvedEndpoint, dial_path, resolve_endpoint
from tracker_service.services.node_files import CONFIG_PATH, TOKENIZER_PATH, fetch_metadata
from tracker_service.services.reachability import CHALLENGE_PATH, dial

REFUSED = [
    ("ws://127.0.0.1:7000", "loopback"),
    ("ws://127.8.9.10:7000", "loopback"),
    ("ws://10.1.2.3:7000", "private"),
    ("ws://172.16.0.1:7000", "private"),
    ("ws://192.168.1.20:7000", "private"),
    ("ws://169.254.169.254:80", "metadata"),
    ("ws://169.254.3.4:7000", "link-local"),
    ("ws://100.64.0.1:7000", "non-global"),
    ("ws://0.0.0.0:7000", "unspecified"),
    ("ws://224.0.0.1:7000", "multicast"),
    ("ws://[::1]:7000", "loopback"),
    ("ws://[fe80::1]:7000", "link-local"),
    ("ws://[fc00::1]:7000", "private"),
    ("ws://[fd00:ec2::254]:80", "metadata"),
    ("ws://[::ffff:127.0.0.1]:7000", "loopback"),
    ("ws://[::ffff:10.0.0.1]:7000", "private"),
    ("ws://[2002:7f00:1::]:7000", "loopback"),  # 6to4 around 127.0.0.1
    ("ws://localhost:7000", "loopback"),  # a name that resolves to loopback
]


@pytest.mark.parametrize(("endpoint", "words"), REFUSED)
def test_non_public_addresses_are_refused_with_what_they_are(endpoint: str, words: str) -> None:
    with pytest.raises(EndpointRefused) as caught:
        resolve_endpoint(endpoint, allow_private=False)
    assert words in str(caught.value) and "--allow-private-endpoints" in str(caught.value)
    assert caught.value.reason == "endpoint-refused"


@pytest.mark.parametrize(
    "endpoint", ["http://8.8.8.8:80", "ws://8.8.8.8", "ftp://8.8.8.8:21", "ws://:80", "8.8.8.8"]
)
def test_only_ws_and_wss_urls_with_a_port_are_dialled(endpoint: str) -> None:
    with pytest.raises(EndpointRefused):
        resolve_endpoint(endpoint, allow_private=True)


@pytest.mark.parametrize(
    ("endpoint", "address"),
    [
        ("ws://8.8.8.8:7000", "8.8.8.8"),
        ("wss://[2606:4700:4700::1111]:443", "2606:4700:4700::1111"),
    ],
)
def test_a_public_address_is_pinned_for_the_dial(endpoint: str, address: str) -> None:
    pinned = resolve_endpoint(endpoint, allow_private=False)
    assert pinned.address == address
    assert address in pinned.http_base


def test_the_operator_may_allow_private_endpoints() -> None:
    assert resolve_endpoint("ws://127.0.0.1:7000", allow_private=True).address == "127.0.0.1"


def test_registration_of_a_loopback_endpoint_is_refused_with_a_reason(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, background_tasks=False, allow_private_endpoints=False)
    app = create_app(settings)
    with TestClient(app) as client:
        refused = register(client, FakeNode(endpoint="ws://169.254.169.254:80"))
        state = client.get("/api/v1/state").json()
    app.state.tracker.database.dispose()
    assert refused.status_code == 422
    assert refused.json()["reason"] == "endpoint-refused"
    assert state["nodes"] == []


def test_the_dial_goes_to_the_resolved_address_with_the_name_in_host() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(404)

    async def go() -> Any:
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
            return await dial(
                client,
                node_id="0" * 32,
                endpoint="ws://localhost:7001",
                public_key=b"k" * 32,
                timeout_s=2.0,
                allow_private=True,
            )

    verdict = asyncio.run(go())
    assert verdict.status == "unreachable"
    (request,) = seen
    assert request.url.host in ("127.0.0.1", "::1")  # the literal, resolved once
    assert request.headers["host"] == "localhost:7001"


def test_a_dial_to_a_refused_endpoint_never_connects() -> None:
    seen: list[httpx.Request] = []

    async def go() -> Any:
        transport = httpx.MockTransport(lambda r: seen.append(r) or httpx.Response(200))
        async with httpx.AsyncClient(transport=transport) as client:
            return await dial(
                client,
                node_id="0" * 32,
                endpoint="ws://127.0.0.1:7001",
                public_key=b"k" * 32,
                timeout_s=2.0,
            )

    verdict = asyncio.run(go())
    assert verdict.status == "unreachable" and "loopback" in verdict.reason
    assert seen == []


RELAYED = "ws://relay.example:8765/relay/" + "ab" * 16


@pytest.mark.parametrize(
    ("endpoint", "kept"),
    [
        (RELAYED, "/relay/" + "ab" * 16),
        (RELAYED + "/", "/relay/" + "ab" * 16),
        ("wss://r.example:443/base/relay/" + "cd" * 16, "/base/relay/" + "cd" * 16),
        ("ws://8.8.8.8:7000/some/path", ""),  # a direct node serves at its root
        ("ws://8.8.8.8:7000/relay/not-a-node-id", ""),
        ("ws://8.8.8.8:7000", ""),
    ],
)
def test_only_a_relayed_endpoint_keeps_its_path_in_the_dial(endpoint: str, kept: str) -> None:
    assert dial_path(endpoint) == kept
    pinned = ResolvedEndpoint(endpoint, "ws", "n.example", 7000, "203.0.113.5")
    assert pinned.http_url("/v1/tokenizer") == f"http://203.0.113.5:7000{kept}/v1/tokenizer"


def test_the_challenge_and_the_file_fetch_of_a_relayed_node_go_under_its_relay_path() -> None:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        return httpx.Response(404)

    endpoint = "ws://localhost:7001/relay/" + "ab" * 16

    async def go() -> None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
            await dial(
                client,
                node_id="ab" * 16,
                endpoint=endpoint,
                public_key=b"k" * 32,
                timeout_s=2.0,
                allow_private=True,
            )
            await fetch_metadata(client, endpoint, TOKENIZER_PATH, allow_private=True)
            await fetch_metadata(client, "ws://localhost:7001/x", CONFIG_PATH, allow_private=True)

    asyncio.run(go())
    prefix = "/relay/" + "ab" * 16
    assert seen == [prefix + CHALLENGE_PATH, prefix + TOKENIZER_PATH, CONFIG_PATH]
