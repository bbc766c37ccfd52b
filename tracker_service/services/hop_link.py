"""One hop of a route session: its WebSocket, what it was sent, how its failures read.

:class:`~tracker_service.services.route_session.RouteSession` drives the hops in route
order; everything here concerns a single hop: dialling the node at its pinned
address, sending a control message, waiting for the node's reply, and turning a
refusal, a timeout or a close code into a :class:`RouteFailure` that names the
hop, so a caller can exclude that node and ask for another route.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from tracker_service.domain.tickets import HopReceipt
from tracker_service.errors import (
    TLS_PIN_REQUIRED,
    EndpointRefused,
    PinMismatch,
    RouteFailure,
)
from tracker_service.relay.directory import relay_of
from tracker_service.security.endpoint_policy import resolve_endpoint
from tracker_service.security.node_tls import PinnedConnect
from tracker_service.security.relay_tunnel import connect_through_relay
from tracker_service.services.session_plan import PlannedHop

log = logging.getLogger(__name__)

MAX_CONTROL_BYTES = 64 * 1024

# Reasons of a failure on the client side (the node's own codes pass through).
UNREACHABLE = "unreachable"
CONNECTION_CLOSED = "connection-closed"
TIMEOUT = "timeout"
PROTOCOL = "protocol-error"
BAD_RECEIPT = "bad-receipt"
FRAME_TOO_LARGE = "frame-too-large"
# A chained hop shows no valid signed word of its predecessor for the step it computed.
CHAIN_MISMATCH = "chain-mismatch"
# A chained hop signed that it passed its successor another step than its own reply and
# the client's step keys show (a forged tensor, position, rewind, verify or draft): proof
# of a lie, pinned on the signer; not a chain that merely failed (no star fallback).
CHAIN_FORGED = "chain-forged"
# The node's own codes for a chain that could not be linked or broke (docs/wire.md#chained-hops):
# the route may still run as a star.
CHAIN_REFUSED = "chain-refused"
CHAIN_BROKEN = "chain-broken"
CHAIN_REASONS = frozenset({CHAIN_MISMATCH, CHAIN_REFUSED, CHAIN_BROKEN})
# The node is leaving (its owner paused it, it stops or moves): it ended the session
# itself before its next step (the node's code), or it announced its departure to the
# tracker, which closed the hop (ours). Neither is a fault: fail over at once, suspect
# nothing (docs/wire.md#leaving).
NODE_LEAVING = "node-leaving"
NODE_LEFT = "node-left"
DEPARTURE_REASONS = frozenset({NODE_LEAVING, NODE_LEFT})


@dataclass
class HopLink:
    plan: PlannedHop
    index: int
    ws: ClientConnection | None = None
    steps: int = 0
    tokens: int = 0
    layers: list[int] = field(default_factory=list)
    inputs: list[bytes] = field(default_factory=list)  # kept only while audited
    last_reply: bytes | None = None  # the receipt's output_sha256 must bind this
    audit_rate: float = 0.0
    # a node on probation is audited inline: a stranger's lie never reaches a user
    audit_inline: bool = False
    # The node signs a receipt after every step reply (docs/wire.md#step-receipts).
    step_receipts: bool = False
    speculative_steps: bool = False  # the node takes rewind and verify step frames
    # The verified signed receipt that came with the last reply: binds the node to it.
    step_receipt: dict[str, Any] | None = None
    # ... and its checked content (steps, positions): what a dropped route pays the hop
    step_verified: HopReceipt | None = None
    # The tracker heard the node announce it leaves: the hop was closed for that.
    departed: bool = False

    def fail(self, reason: str, message: str) -> RouteFailure:
        return RouteFailure(reason, message, hop_index=self.index, node_id=self.plan.node_id)

    async def connect(
        self,
        *,
        allow_private: bool,
        max_size: int,
        open_timeout_s: float,
        allow_plaintext: bool = False,
    ) -> None:
        """Open the hop's WebSocket at the address its host resolves to, once, under the
        endpoint policy (a rebinding resolver cannot redirect the session).

        A node is dialled over TLS and its certificate checked against the pin it
        registered before anything is sent; a relayed node too, through a TLS tunnel the
        relay carries as ciphertext (security/relay_tunnel.py). Plaintext only with
        ``allow_plaintext`` (a development tracker)."""
        relayed = relay_of(self.plan.endpoint) is not None
        secure = self.plan.endpoint.startswith("wss://")
        if not self.plan.tls_pin and not (allow_plaintext and (relayed or not secure)):
            raise self.fail(
                TLS_PIN_REQUIRED,
                f"{self.plan.endpoint} registered no TLS pin; this tracker routes through "
                "plaintext nodes only when started with --allow-plaintext-nodes",
            )
        try:
            pinned = await asyncio.to_thread(
                resolve_endpoint, self.plan.endpoint, allow_private=allow_private
            )
        except EndpointRefused as exc:
            raise self.fail(UNREACHABLE, str(exc)) from exc
        options: dict[str, Any] = {"max_size": max_size, "compression": None}
        # The URI still names the host (Host header, SNI); the socket goes to the address.
        at: dict[str, Any] = {
            "host": pinned.address,
            "port": pinned.port,
            "open_timeout": open_timeout_s,
        }
        try:
            if relayed and self.plan.tls_pin:
                self.ws = await connect_through_relay(
                    self.plan.endpoint,
                    host=pinned.host,
                    pin=self.plan.tls_pin,
                    relay_options=at,
                    session_options={**options, "open_timeout": open_timeout_s},
                )
            elif secure and not relayed:
                self.ws = await PinnedConnect(
                    self.plan.session_url, pin=self.plan.tls_pin, **options, **at
                )
            else:
                self.ws = await connect(self.plan.session_url, **options, **at)
        except PinMismatch as exc:
            raise self.fail(exc.reason, str(exc)) from exc
        except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as exc:
            raise self.fail(
                UNREACHABLE, f"cannot open {self.plan.session_url}: {exc or type(exc).__name__}"
            ) from exc

    async def exchange(self, frame: bytes, timeout_s: float) -> bytes:
        """Send one step frame and return the node's binary reply."""
        await self.send_frame(frame)
        return await self.receive(timeout_s)

    async def send_frame(self, frame: bytes) -> None:
        """Send one step frame without waiting for the reply (a chain's first hop)."""
        try:
            await self._open_ws().send(frame)
        except ConnectionClosed as exc:
            raise _closed(self, exc) from exc

    async def receive(self, timeout_s: float) -> bytes:
        """The node's next binary reply (a chained hop's, to a step sent to the first hop)."""
        try:
            async with asyncio.timeout(timeout_s):
                reply = await self._open_ws().recv()
        except TimeoutError as exc:
            raise self.fail(TIMEOUT, f"no reply within {timeout_s:.0f} s") from exc
        except ConnectionClosed as exc:
            raise _closed(self, exc) from exc
        if isinstance(reply, str):
            raise _refusal(self, reply, "a step reply")
        return reply

    async def send(self, text: str) -> None:
        try:
            await self._open_ws().send(text)
        except ConnectionClosed as exc:
            raise _closed(self, exc) from exc

    async def expect_text(self, kind: str, timeout_s: float) -> dict[str, Any]:
        """The node's next message, which must be the JSON control message `kind`."""
        try:
            async with asyncio.timeout(timeout_s):
                reply = await self._open_ws().recv()
        except TimeoutError as exc:
            raise self.fail(TIMEOUT, f"no {kind!r} message within {timeout_s:.0f} s") from exc
        except ConnectionClosed as exc:
            raise _closed(self, exc) from exc
        if not isinstance(reply, str):
            raise self.fail(PROTOCOL, f"expected the node's {kind!r} message, got binary")
        parsed = _parse(self, reply)
        if parsed.get("type") != kind:
            raise _refusal(self, reply, f"the {kind!r} message")
        return parsed

    def depart(self) -> None:
        """The node announced it leaves: close the hop now, so a step waiting on it fails
        with ``node-left`` at once instead of at its timeout."""
        self.departed = True
        ws = self.ws
        if ws is not None:
            ws.transport.abort()  # no close handshake: the node may be gone already

    async def drop(self) -> None:
        """Close the connection, if open, without waiting for anything from the node."""
        ws, self.ws = self.ws, None
        if ws is not None:
            try:
                await ws.close()
            except Exception:  # a dying connection must not mask the real failure
                log.debug("closing hop %d failed", self.index, exc_info=True)

    def _open_ws(self) -> ClientConnection:
        if self.ws is None:
            raise self.fail(PROTOCOL, "the hop is not open; call open() first")
        return self.ws


def _parse(hop: HopLink, text: str) -> dict[str, Any]:
    if len(text) > MAX_CONTROL_BYTES:
        raise hop.fail(
            PROTOCOL, f"a control message of {len(text)} bytes is over {MAX_CONTROL_BYTES}"
        )
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise hop.fail(PROTOCOL, "the node sent a text message that is not JSON") from exc
    if not isinstance(parsed, dict):
        raise hop.fail(PROTOCOL, "the node sent a JSON message that is not an object")
    return parsed


def _refusal(hop: HopLink, text: str, expected: str) -> RouteFailure:
    parsed = _parse(hop, text)
    if parsed.get("type") == "error":
        return hop.fail(
            str(parsed.get("reason") or PROTOCOL),
            str(parsed.get("message") or "the node refused the session"),
        )
    return hop.fail(PROTOCOL, f"expected {expected}, the node sent {parsed.get('type')!r}")


def _closed(hop: HopLink, exc: ConnectionClosed) -> RouteFailure:
    if hop.departed:
        return hop.fail(NODE_LEFT, "the node announced to the tracker that it is leaving")
    received = exc.rcvd
    if received is not None and received.code == 1009:
        return hop.fail(FRAME_TOO_LARGE, "the node dropped the connection: the frame was too large")
    if received is not None and received.code in (1008, 1011) and received.reason:
        return hop.fail(received.reason, "the node ended the session")
    code = received.code if received is not None else "none"
    return hop.fail(CONNECTION_CLOSED, f"the node closed the connection (close code {code})")
