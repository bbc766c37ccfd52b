"""The tokenizer and metadata files the certifier and the gateway fetch from nodes
obey the endpoint policy: public addresses only unless the operator allows private
ones, the name resolved once and the GET sent to that address (no DNS rebinding)."""

from __future__ import annotations

import asyncio
import hashlib
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import Whitespace

from tracker_service.domain.route_formation import Candidate
from tracker_service.errors import AssetsUnavailable
from tracker_service.gateway.model_assets import AssetStore
from tracker_service.security import endpoint_policy
from tracker_service.services.certifier import Certifier, CertifierSettings, fetch_tokenizer
from tracker_service.services.node_files import CONFIG_PATH, fetch_metadata
from tracker_service.services.session_plan import PlannedHop, RoutePlan
from tracker_service.store.db import Database
from tracker_service.store.route_candidates import RecipeInfo


def tokenizer_bytes() -> bytes:
    words = ["[UNK]", "the", "capital", "of", "france", "is"]
    tokenizer = Tokenizer(WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()
    return tokenizer.to_str().encode("utf-8")


TOKENIZER = tokenizer_bytes()
REVISION = hashlib.sha256(TOKENIZER).hexdigest()
FILES = {"/v1/tokenizer": TOKENIZER, CONFIG_PATH: b'{"max_position_embeddings": 128}'}


class FileNode:
    """A loopback HTTP server serving a node's files; records (path, Host) per request."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        seen = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append((self.path, self.headers.get("Host", "")))
                body = FILES.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def node() -> Iterator[FileNode]:
    served = FileNode()
    yield served
    served.stop()


class Resolver:
    """getaddrinfo for made-up names (each lookup counted); other names resolve as usual."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers
        self.lookups: dict[str, int] = {}
        self.real = socket.getaddrinfo

    def __call__(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in self.answers:
            return self.real(host, port, *args, **kwargs)
        self.lookups[host] = self.lookups.get(host, 0) + 1
        # A rebinding resolver: the first answer, then loopback's neighbour for ever after.
        address = self.answers[host][min(self.lookups[host] - 1, len(self.answers[host]) - 1)]
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        return [(family, socket.SOCK_STREAM, 6, "", (address, port))]


def resolve_with(monkeypatch: pytest.MonkeyPatch, answers: dict[str, list[str]]) -> Resolver:
    resolver = Resolver(answers)
    monkeypatch.setattr(endpoint_policy.socket, "getaddrinfo", resolver)
    return resolver


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def tokenizer_from(endpoints: list[str], *, allow_private: bool) -> Tokenizer | None:
    async with httpx.AsyncClient(trust_env=False) as client:
        return await fetch_tokenizer(client, endpoints, REVISION, allow_private=allow_private)


def test_the_tokenizer_is_not_fetched_from_a_loopback_node_on_a_public_tracker(
    node: FileNode,
) -> None:
    assert run(tokenizer_from([f"ws://127.0.0.1:{node.port}"], allow_private=False)) is None
    assert node.requests == []  # refused before any connection


def test_the_tokenizer_is_fetched_from_a_loopback_node_when_private_endpoints_are_allowed(
    node: FileNode,
) -> None:
    tokenizer = run(tokenizer_from([f"ws://127.0.0.1:{node.port}"], allow_private=True))
    assert tokenizer is not None
    assert tokenizer.encode("the capital of france").ids == [1, 2, 3, 4]
    assert node.requests == [("/v1/tokenizer", f"127.0.0.1:{node.port}")]


def test_a_relayed_nodes_file_is_fetched_under_its_path_on_the_relay(node: FileNode) -> None:
    # The relay forwards /relay/<node_id>/v1/... to the node; a direct endpoint has no path.
    node_id = "ab" * 16
    relayed = f"ws://127.0.0.1:{node.port}/relay/{node_id}"
    FILES[f"/relay/{node_id}{CONFIG_PATH}"] = FILES[CONFIG_PATH]
    try:
        body = run(_fetch(relayed, CONFIG_PATH))
    finally:
        del FILES[f"/relay/{node_id}{CONFIG_PATH}"]
    assert body == FILES[CONFIG_PATH]
    assert node.requests == [(f"/relay/{node_id}{CONFIG_PATH}", f"127.0.0.1:{node.port}")]


async def _fetch(endpoint: str, path: str) -> bytes | None:
    async with httpx.AsyncClient(trust_env=False) as client:
        return await fetch_metadata(client, endpoint, path, allow_private=True)


def test_the_name_is_resolved_once_and_the_fetch_goes_to_that_address(
    node: FileNode, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Resolved again, the name would point at an address nothing listens on.
    resolver = resolve_with(monkeypatch, {"node.example": ["127.0.0.1", "127.0.0.2"]})
    tokenizer = run(tokenizer_from([f"ws://node.example:{node.port}"], allow_private=True))
    assert tokenizer is not None
    assert resolver.lookups == {"node.example": 1}
    assert node.requests == [("/v1/tokenizer", f"node.example:{node.port}")]


@pytest.mark.parametrize(
    "address", ["127.0.0.1", "10.0.0.7", "169.254.169.254", "::1", "fd00:ec2::254", "100.64.0.1"]
)
def test_a_name_resolving_to_a_private_or_metadata_address_is_never_fetched(
    monkeypatch: pytest.MonkeyPatch, address: str
) -> None:
    resolve_with(monkeypatch, {"evil.example": [address]})
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=TOKENIZER)

    transport = httpx.MockTransport(answer)

    async def go() -> tuple[bytes | None, Tokenizer | None]:
        async with httpx.AsyncClient(transport=transport) as client:
            config = await fetch_metadata(client, "ws://evil.example:80", CONFIG_PATH)
            tokenizer = await fetch_tokenizer(client, ["ws://evil.example:80"], REVISION)
            return config, tokenizer

    assert run(go()) == (None, None)
    assert seen == []


def test_a_public_wss_node_is_fetched_at_its_address_with_the_name_in_host_and_sni(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    resolve_with(monkeypatch, {"node.example": ["93.184.216.34", "127.0.0.1"]})
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=TOKENIZER)

    async def go() -> Tokenizer | None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
            return await fetch_tokenizer(client, ["wss://node.example:8443"], REVISION)

    assert run(go()) is not None
    (request,) = seen
    assert str(request.url) == "https://93.184.216.34:8443/v1/tokenizer"
    assert request.headers["host"] == "node.example:8443"
    assert request.extensions["sni_hostname"] == "node.example"


def plan_to(endpoint: str) -> RoutePlan:
    hops = tuple(
        PlannedHop(f"{i}" * 32, 2 * i, 2 * i + 2, 2 * i, endpoint, b"k" * 32) for i in range(2)
    )
    return RoutePlan("route-1", 1, time.time() + 60, ("a" * 64, "b" * 64), 4, hops, {})


def recipe() -> RecipeInfo:
    return RecipeInfo(
        ("a" * 64, "b" * 64), "dark", 4, {"tokenizer_revision": REVISION}, "tiny", "tiny-fp32"
    )


@pytest.mark.parametrize(("allow_private", "source"), [(False, "fixed-ids"), (True, "tokenizer")])
def test_the_certifier_fetches_its_prompt_tokenizer_under_the_policy(
    node: FileNode, allow_private: bool, source: str
) -> None:
    certifier = Certifier(
        cast(Any, None),  # the prompt needs neither the store nor the planner
        cast(Any, None),
        cast(Any, None),
        settings=CertifierSettings(allow_private_endpoints=allow_private),
    )
    _ids, used = run(certifier._prompt(plan_to(f"ws://127.0.0.1:{node.port}"), recipe()))
    assert used == source
    assert len(node.requests) == (1 if allow_private else 0)


def test_the_gateway_fetches_no_asset_from_a_loopback_node_on_a_public_tracker(
    node: FileNode, tmp_path: Path
) -> None:
    database = Database(f"sqlite:///{tmp_path / 'tracker.db'}")
    store = AssetStore(database)
    candidate = Candidate("0" * 32, f"ws://127.0.0.1:{node.port}", b"k" * 32, 0, 4, 1.0)
    with pytest.raises(AssetsUnavailable, match="tokenizer"):
        run(store.get(recipe(), [candidate]))
    assert node.requests == []
    database.dispose()
