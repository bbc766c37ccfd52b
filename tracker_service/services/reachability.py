"""Reachability: before a node is routable, the tracker dials its data plane.

The dial is ``GET http://host:port/v1/challenge?nonce=<hex>`` on the port of
the node's registered ``ws://`` endpoint; the node must answer with a signature
by its *registered* key over ``b"meshnet.reachability.v1\\n" + nonce + "\\n" +
node_id``. A fresh nonce per dial means an answer cannot be replayed, and the
domain means it cannot be passed off as any other signed document. A node
behind NAT (or with a closed port) stays listed, unroutable, with the reason.

The monitor is a background task: it dials nodes that were never dialled
within a fraction of a second of registration (the registration response is
not held up), re-checks reachable ones periodically and unreachable ones more
often, and re-dials at once a node a route client saw fail. It polls the store
rather than being told, so it also sees registrations a sibling replica took.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from tracker_service.domain.keys import verify_ed25519
from tracker_service.domain.wire import b64encode
from tracker_service.errors import ChallengeFailed, EndpointRefused, PinMismatch
from tracker_service.relay.directory import relay_of
from tracker_service.security.endpoint_policy import dial_path, resolve_endpoint
from tracker_service.security.node_tls import check_response_pin, node_http_client
from tracker_service.services.background import BackgroundLoop
from tracker_service.store.db import Database
from tracker_service.store.route_candidates import (
    DialTarget,
    nodes_due_for_dial,
    record_dial,
    request_redial,
)
from tracker_service.store.tables import REACH_REACHABLE, REACH_UNREACHABLE

log = logging.getLogger(__name__)

REACHABILITY_DOMAIN = b"meshnet.reachability.v1\n"
CHALLENGE_PATH = "/v1/challenge"
NONCE_BYTES = 16
MAX_ANSWER_BYTES = 16 * 1024


@dataclass(frozen=True)
class Verdict:
    status: str  # REACH_REACHABLE or REACH_UNREACHABLE
    reason: str
    latency_ms: float | None = None


def http_base(endpoint: str) -> str:
    """``ws://host:port[/path]`` -> ``http://host:port`` (``wss`` -> ``https``); only a
    relayed endpoint keeps its path (``/relay/<node_id>``), under which the relay
    forwards the node's own paths."""
    parts = urlsplit(endpoint)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme)
    if scheme is None or not parts.netloc:
        raise ChallengeFailed(f"the registered endpoint {endpoint!r} is not ws://host:port")
    return urlunsplit((scheme, parts.netloc, dial_path(endpoint), "", ""))


def challenge_url(endpoint: str, nonce: str) -> str:
    return f"{http_base(endpoint)}{CHALLENGE_PATH}?nonce={nonce}"


def challenge_message(nonce: str, node_id: str) -> bytes:
    return REACHABILITY_DOMAIN + f"{nonce}\n{node_id}".encode()


def verify_answer(answer: object, *, nonce: str, node_id: str, public_key: bytes) -> None:
    """The answer must come from the registered key, for this node and this nonce."""
    if not isinstance(answer, Mapping):
        raise ChallengeFailed("the challenge answer is not a JSON object")
    if answer.get("node_id") != node_id:
        raise ChallengeFailed(
            f"another node answered on this port ({answer.get('node_id')!r}, expected {node_id})"
        )
    if answer.get("public_key") != b64encode(public_key):
        raise ChallengeFailed("the answer names a different public key than the node registered")
    if answer.get("nonce") != nonce:
        raise ChallengeFailed("the answer is for another nonce (a replayed or proxied answer)")
    signature = answer.get("signature")
    if not isinstance(signature, str) or not verify_ed25519(
        public_key, signature, challenge_message(nonce, node_id)
    ):
        raise ChallengeFailed("the answer is not signed by the node's registered key")


async def dial(
    client: httpx.AsyncClient,
    *,
    node_id: str,
    endpoint: str,
    public_key: bytes,
    timeout_s: float,
    allow_private: bool = False,
    tls_pin: str = "",
) -> Verdict:
    """Dial one node's data plane once; never raises.

    The host is resolved once, checked against the endpoint policy, and the
    connection goes to that address (the name travels in Host and SNI), so a
    rebinding resolver cannot point the dial at the tracker's own network."""
    nonce = secrets.token_hex(NONCE_BYTES)
    try:
        url = challenge_url(endpoint, nonce)
        pinned = await asyncio.to_thread(resolve_endpoint, endpoint, allow_private=allow_private)
    except ChallengeFailed as exc:
        return Verdict(REACH_UNREACHABLE, str(exc))
    except EndpointRefused as exc:
        return Verdict(REACH_UNREACHABLE, str(exc))
    relay = relay_of(endpoint)
    dial_url = pinned.http_url(f"{CHALLENGE_PATH}?nonce={nonce}")
    headers = {"Host": pinned.host_header}
    extensions = {"sni_hostname": pinned.host} if pinned.scheme == "wss" else {}
    # A direct wss:// node must present the certificate it pinned; through a relay the
    # TLS peer is the relay (docs/wire.md#tls).
    pin = tls_pin if relay is None and pinned.scheme == "wss" else None
    began = time.perf_counter()
    try:
        status, body = await _get_capped(client, dial_url, timeout_s, headers, extensions, pin)
    except PinMismatch as exc:
        return Verdict(REACH_UNREACHABLE, f"{exc} [{exc.reason}]")
    except (httpx.TimeoutException, TimeoutError):
        return Verdict(
            REACH_UNREACHABLE,
            f"no answer from {url.split('?')[0]} within {timeout_s:g} s; open the data-plane "
            "port to the internet (or forward it on your router)",
        )
    except httpx.HTTPError as exc:
        return Verdict(
            REACH_UNREACHABLE,
            f"cannot connect to {url.split('?')[0]} ({type(exc).__name__}: {exc}); is the node "
            "running and its data-plane port open to the internet?",
        )
    latency_ms = (time.perf_counter() - began) * 1000.0
    if status != 200 and relay is not None:
        return Verdict(
            REACH_UNREACHABLE,
            f"the node's relay {relay} answered HTTP {status}: the node holds no link to it "
            "now (it reconnects by itself when the relay is back)",
        )
    if status != 200:
        return Verdict(
            REACH_UNREACHABLE,
            f"the data plane answered HTTP {status} to the challenge; "
            "another program may be listening on that port",
        )
    if body is None:
        return Verdict(REACH_UNREACHABLE, "the challenge answer is implausibly large")
    try:
        answer: Any = json.loads(body)
        verify_answer(answer, nonce=nonce, node_id=node_id, public_key=public_key)
    except ValueError:
        return Verdict(REACH_UNREACHABLE, "the challenge answer is not JSON")
    except ChallengeFailed as exc:
        return Verdict(REACH_UNREACHABLE, str(exc))
    how = "" if relay is None else f" through its relay {relay}"
    return Verdict(
        REACH_REACHABLE,
        f"answered the signed challenge{how} in {latency_ms:.0f} ms",
        latency_ms,
    )


async def _get_capped(
    client: httpx.AsyncClient,
    url: str,
    timeout_s: float,
    headers: Mapping[str, str] | None = None,
    extensions: Mapping[str, Any] | None = None,
    pin: str | None = None,
) -> tuple[int, bytes | None]:
    """(status, body), body None past MAX_ANSWER_BYTES: a node cannot flood the tracker.
    With ``pin``, the peer's certificate must carry it (else PinMismatch)."""
    async with asyncio.timeout(timeout_s * 2):
        async with client.stream(
            "GET",
            url,
            timeout=timeout_s,
            headers=dict(headers or {}),
            extensions=dict(extensions or {}),
        ) as response:
            if pin is not None:
                check_response_pin(response, pin)
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_ANSWER_BYTES:
                    return response.status_code, None
            return response.status_code, bytes(body)


class ReachabilityMonitor(BackgroundLoop):
    """Dials due nodes in the background and records each verdict in the store."""

    task_name = "meshnet-reachability"

    def __init__(
        self,
        database: Database,
        *,
        poll_s: float = 0.5,
        recheck_s: float = 60.0,
        retry_s: float = 10.0,
        timeout_s: float = 3.0,
        concurrency: int = 32,
        batch: int = 256,
        on_reachable: Callable[[DialTarget], None] | None = None,
        allow_private_endpoints: bool = False,
    ) -> None:
        super().__init__(poll_s)
        self._allow_private = allow_private_endpoints
        self._db = database
        self._recheck_s = recheck_s
        self._retry_s = retry_s
        self._timeout_s = timeout_s
        self._concurrency = concurrency
        self._batch = batch
        self.on_reachable = on_reachable
        self._latency: dict[str, float] = {}
        self.relayed: set[str] = set()  # nodes last dialled through a relay

    def latency_ms(self, node_id: str) -> float | None:
        """The last measured dial round trip (this replica's view), for route choice."""
        return self._latency.get(node_id)

    def latencies(self) -> dict[str, float]:
        """Every measured dial round trip, a copy (one C-level copy: safe while the
        event loop records new ones)."""
        return dict(self._latency)

    def suspect(self, node_id: str) -> None:
        """A route client saw this node fail: dial it again now (blocking, store write)."""
        with self._db.sessions.begin() as session:
            request_redial(session, node_id)

    async def run_pass(self) -> int:
        return await self.check_due()

    async def check_due(self) -> int:
        """One pass: dial every due node (bounded concurrency); returns how many."""
        now = time.time()
        targets = await asyncio.to_thread(self._due, now)
        if not targets:
            return 0
        client = self._client or node_http_client()
        gate = asyncio.Semaphore(self._concurrency)

        async def one(target: DialTarget) -> Verdict:
            async with gate:
                return await dial(
                    client,
                    node_id=target.node_id,
                    endpoint=target.endpoint,
                    public_key=target.public_key,
                    timeout_s=self._timeout_s,
                    allow_private=self._allow_private,
                    tls_pin=target.tls_pin,
                )

        try:
            verdicts = await asyncio.gather(*(one(t) for t in targets))
        finally:
            if client is not self._client:
                await client.aclose()
        newly = await asyncio.to_thread(self._record, list(zip(targets, verdicts, strict=True)))
        for target in newly:  # called on the loop, so callbacks may touch asyncio objects
            if self.on_reachable is not None:
                self.on_reachable(target)
        return len(targets)

    def _due(self, now: float) -> list[DialTarget]:
        with self._db.session() as session:
            return nodes_due_for_dial(
                session,
                now=now,
                recheck_s=self._recheck_s,
                retry_s=self._retry_s,
                limit=self._batch,
            )

    def _record(self, results: list[tuple[DialTarget, Verdict]]) -> list[DialTarget]:
        """Store the verdicts; returns the nodes that just became reachable."""
        now = time.time()
        newly_reachable: list[DialTarget] = []
        with self._db.sessions.begin() as session:
            for target, verdict in results:
                stored = record_dial(
                    session, target, status=verdict.status, reason=verdict.reason, now=now
                )
                if verdict.latency_ms is not None:
                    self._latency[target.node_id] = verdict.latency_ms
                if relay_of(target.endpoint) is None:
                    self.relayed.discard(target.node_id)
                else:
                    self.relayed.add(target.node_id)
                if stored and verdict.status != target.reachability:
                    log.info("node %s is %s: %s", target.node_id, verdict.status, verdict.reason)
                    if verdict.status == REACH_REACHABLE:
                        newly_reachable.append(target)
        return newly_reachable
