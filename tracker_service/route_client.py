"""The tracker's route client: drives one route session across its hops.

One WebSocket per hop (``ws://host:port/v1/session``), opened in route order
with the same signed ticket. A step sends the token ids to the first hop and
relays each hop's hidden states to the next; the last hop samples and returns
token ids. Closing collects every hop's receipt and verifies it against the key
the node registered with, and against the work this client actually sent.

Async, so a gateway can stream tokens as they are produced::

    async with RouteSession(plan) as session:
        await session.open(max_length=len(prompt) + 16, sampling=Sampling(temperature=0.7))
        async for token in session.generate(prompt, 16, stop_ids={eos}):
            ...
        receipts = await session.close()

Independent of ``core`` (the wire contract is re-implemented in
:mod:`tracker_service.wire_frames` and :mod:`tracker_service.tickets`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from tracker_service import wire_frames
from tracker_service.endpoint_policy import EndpointRefused, resolve_endpoint
from tracker_service.tickets import (
    HopReceipt,
    ReceiptError,
    TicketHop,
    check_receipt_matches,
    frame_output_digest,
    token_output_digest,
    verify_receipt,
)
from tracker_service.wire import b64decode_exact, b64encode

if TYPE_CHECKING:
    from tracker_service.step_audit import StepAuditor

log = logging.getLogger(__name__)

SESSION_PATH = "/v1/session"
DEFAULT_MAX_REPLY_BYTES = 256 * 1024 * 1024
MAX_CONTROL_BYTES = 64 * 1024

# Reasons of a failure on the client side (the node's own codes pass through).
UNREACHABLE = "unreachable"
CONNECTION_CLOSED = "connection-closed"
TIMEOUT = "timeout"
PROTOCOL = "protocol-error"
BAD_RECEIPT = "bad-receipt"
FRAME_TOO_LARGE = "frame-too-large"


def reply_output_digest(reply: bytes, *, last_hop: bool, max_bytes: int) -> str:
    """The digest a hop's receipt signs for this reply: the frame's bytes, or the
    last hop's sampled token ids (raises ``FrameError`` on an unreadable reply)."""
    if not last_hop:
        return frame_output_digest(reply)
    decoded = wire_frames.decode_last_hop(reply, max_bytes=max_bytes, batch_size=1)
    return token_output_digest(decoded.token_ids)


class RouteFailure(Exception):
    """A hop refused or broke the session. ``hop_index``/``node_id`` name the hop,
    so a caller can exclude that node and ask for another route."""

    def __init__(self, reason: str, message: str, *, hop_index: int, node_id: str) -> None:
        super().__init__(f"hop {hop_index} (node {node_id[:12]}): {message} [{reason}]")
        self.reason = reason
        self.message = message
        self.hop_index = hop_index
        self.node_id = node_id


@dataclass(frozen=True)
class PlannedHop:
    """One hop of a planned route: what to dial and which key signs its receipt."""

    node_id: str
    start: int
    end: int
    effective_start: int
    endpoint: str  # ws://host:port as registered
    public_key: bytes

    @property
    def session_url(self) -> str:
        return self.endpoint.rstrip("/") + SESSION_PATH

    @property
    def ticket_hop(self) -> TicketHop:
        return TicketHop(self.node_id, self.start, self.end, self.effective_start)


@dataclass(frozen=True)
class RoutePlan:
    """A route and its signed ticket: everything a client needs to run a session."""

    route_session_id: str
    epoch: int
    expires_at: float
    fingerprint: tuple[str, str]
    layer_count: int
    hops: tuple[PlannedHop, ...]
    signed_ticket: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "route_session_id": self.route_session_id,
            "epoch": self.epoch,
            "expires_at": self.expires_at,
            "fingerprint": {
                "model_artifact_digest": self.fingerprint[0],
                "runtime_recipe_digest": self.fingerprint[1],
            },
            "layer_count": self.layer_count,
            "hops": [
                {
                    "node_id": h.node_id,
                    "start": h.start,
                    "end": h.end,
                    "effective_start": h.effective_start,
                    "endpoint": h.endpoint,
                    "session_url": h.session_url,
                    "public_key": b64encode(h.public_key),
                }
                for h in self.hops
            ],
            "ticket": self.signed_ticket,
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> RoutePlan:
        """The plan as ``POST /api/v1/routes`` returns it (for clients outside the tracker)."""
        fingerprint = raw["fingerprint"]
        return cls(
            route_session_id=str(raw["route_session_id"]),
            epoch=int(raw["epoch"]),
            expires_at=float(raw["expires_at"]),
            fingerprint=(
                str(fingerprint["model_artifact_digest"]),
                str(fingerprint["runtime_recipe_digest"]),
            ),
            layer_count=int(raw["layer_count"]),
            hops=tuple(
                PlannedHop(
                    node_id=str(h["node_id"]),
                    start=int(h["start"]),
                    end=int(h["end"]),
                    effective_start=int(h["effective_start"]),
                    endpoint=str(h["endpoint"]),
                    public_key=b64decode_exact(str(h["public_key"]), 32, "hop public key"),
                )
                for h in raw["hops"]
            ),
            signed_ticket=dict(raw["ticket"]),
        )


@dataclass(frozen=True)
class Sampling:
    """The last hop's sampling settings (greedy by default)."""

    temperature: float = 0.0
    top_k: int = 0
    top_p: float = 1.0
    seed: int | None = None
    logprobs: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature,
            "top_k": self.top_k,
            "top_p": self.top_p,
            "seed": self.seed,
            "logprobs": self.logprobs,
        }


@dataclass(frozen=True)
class GeneratedToken:
    token_id: int
    top_ids: list[int]
    top_logprobs: list[float]
    position: int  # cache positions before the step that produced it
    compute_ms: tuple[float | None, ...]  # per hop, as the nodes reported


@dataclass
class _Hop:
    plan: PlannedHop
    index: int
    ws: ClientConnection | None = None
    steps: int = 0
    tokens: int = 0
    layers: list[int] = field(default_factory=list)
    inputs: list[bytes] = field(default_factory=list)  # kept only while audited
    last_reply: bytes | None = None  # the receipt's output_sha256 must bind this
    audit_rate: float = 0.0

    def fail(self, reason: str, message: str) -> RouteFailure:
        return RouteFailure(reason, message, hop_index=self.index, node_id=self.plan.node_id)


class RouteSession:
    """``open`` -> ``step``/``generate`` -> ``close`` over every hop of one plan."""

    def __init__(
        self,
        plan: RoutePlan,
        *,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        open_timeout_s: float = 30.0,
        step_timeout_s: float = 120.0,
        auditor: StepAuditor | None = None,
        allow_private_endpoints: bool = True,
    ) -> None:
        if not plan.hops:
            raise ValueError("a route plan needs at least one hop")
        self.plan = plan
        # Each hop's host is resolved once, checked (unless private ones are allowed)
        # and dialled at that address: a rebinding resolver cannot redirect a session.
        self._allow_private = allow_private_endpoints
        self._max_reply = max_reply_bytes
        self._open_timeout_s = open_timeout_s
        self._step_timeout_s = step_timeout_s
        self._hops = [_Hop(hop, i) for i, hop in enumerate(plan.hops)]
        self.position = 0
        self.max_length = 0
        self._auditor = auditor
        self._greedy = False

    async def __aenter__(self) -> RouteSession:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.abort()

    # -- open --------------------------------------------------------------------------------

    async def open(self, max_length: int, sampling: Sampling | None = None) -> None:
        """Open every hop in route order with the ticket; the last hop gets `sampling`."""
        self.max_length = max_length
        self._greedy = (sampling or Sampling()).temperature == 0
        if self._auditor is not None:
            for hop in self._hops:
                hop.audit_rate = await asyncio.to_thread(self._auditor.rate_for, hop.plan.node_id)
        for hop in self._hops:
            last = hop.index == len(self._hops) - 1
            message: dict[str, Any] = {
                "type": "open",
                "ticket": self.plan.signed_ticket,
                "max_length": max_length,
            }
            if last:
                message["sampling"] = (sampling or Sampling()).to_json()
            hop.ws = await self._connect(hop)
            await self._send(hop, json.dumps(message))
            opened = await self._expect_text(hop, "opened")
            layers = opened.get("layers")
            want = [hop.plan.effective_start, hop.plan.end]
            if layers != want or opened.get("node_id") != hop.plan.node_id:
                raise hop.fail(
                    PROTOCOL,
                    f"the node opened layers {layers} as {opened.get('node_id')!r}; the route "
                    f"needs layers {want} from {hop.plan.node_id}",
                )
            hop.layers = want

    async def _connect(self, hop: _Hop) -> ClientConnection:
        try:
            pinned = await asyncio.to_thread(
                resolve_endpoint, hop.plan.endpoint, allow_private=self._allow_private
            )
        except EndpointRefused as exc:
            raise hop.fail(UNREACHABLE, str(exc)) from exc
        try:
            return await connect(
                hop.plan.session_url,
                host=pinned.address,  # the URI still names the host (Host header, SNI)
                port=pinned.port,
                max_size=self._max_reply,
                compression=None,
                open_timeout=self._open_timeout_s,
            )
        except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as exc:
            raise hop.fail(
                UNREACHABLE, f"cannot open {hop.plan.session_url}: {exc or type(exc).__name__}"
            ) from exc

    # -- steps -------------------------------------------------------------------------------

    async def step(self, token_ids: Sequence[int]) -> GeneratedToken:
        """Feed `token_ids` (prefill or one decode token) through every hop."""
        if not token_ids:
            raise ValueError("a step needs at least one token id")
        count = len(token_ids)
        if self.position + count > self.max_length:
            raise ValueError(
                f"{count} positions from {self.position} pass the session's max_length "
                f"{self.max_length}"
            )
        frame = wire_frames.input_ids_frame([list(token_ids)], self.position)
        compute: list[float | None] = []
        for hop in self._hops:
            reply = await self._exchange(hop, frame)
            hop.steps += 1
            hop.tokens += count
            hop.last_reply = reply
            await self._maybe_audit(hop, frame, reply)
            last = hop.index == len(self._hops) - 1
            try:
                if last:
                    result = wire_frames.decode_last_hop(
                        reply, max_bytes=self._max_reply, batch_size=1
                    )
                    compute.append(result.compute_ms)
                else:
                    compute.append(wire_frames.compute_ms_of(reply, self._max_reply))
                    frame = wire_frames.relay_hidden(
                        reply, self.position, max_bytes=self._max_reply
                    )
                    shape = wire_frames.hidden_shape(frame, self._max_reply)
                    if shape[:2] != (1, count):
                        raise wire_frames.FrameError(
                            f"hidden states of shape {list(shape)} for a step of {count} positions"
                        )
            except wire_frames.FrameError as exc:
                raise hop.fail(exc.reason, str(exc)) from exc
        token = GeneratedToken(
            token_id=result.token_ids[0],
            top_ids=result.top_ids[0],
            top_logprobs=[float(v) for v in result.top_logprobs[0]],
            position=self.position,
            compute_ms=tuple(compute),
        )
        self.position += count
        return token

    async def _maybe_audit(self, hop: _Hop, frame: bytes, reply: bytes) -> None:
        """Hand a sampled step to the auditor; a hop found lying ends this route at once."""
        if self._auditor is None or hop.audit_rate <= 0:
            return
        hop.inputs.append(frame)
        if not self._auditor.sample(hop.audit_rate):
            return
        try:  # an audit never holds a step longer than the step itself may take
            async with asyncio.timeout(self._step_timeout_s):
                verdict = await self._auditor.audit(
                    self.plan,
                    hop.index,
                    list(hop.inputs),
                    reply,
                    greedy=self._greedy,
                    bind=lambda: self.receipt_now(hop.index),
                )
        except TimeoutError:
            log.info("audit of hop %d ran past the step deadline; step left unaudited", hop.index)
            return
        if hop.plan.node_id in getattr(verdict, "quarantined", ()):
            raise hop.fail(
                "quarantined", "a hop audit found this node's output wrong; it is quarantined"
            )

    async def relay(self, frame: bytes) -> bytes:
        """Send one ready-made step frame to a one-hop session and return the raw reply.

        What an audit replay uses: the same inputs another node was sent.
        """
        if len(self._hops) != 1:
            raise ValueError("relay() drives one-hop sessions only")
        hop = self._hops[0]
        reply = await self._exchange(hop, frame)
        hop.steps += 1
        hop.last_reply = reply
        try:
            hop.tokens += wire_frames.positions_of(frame, self._max_reply)
        except wire_frames.FrameError as exc:
            raise hop.fail(PROTOCOL, f"the relayed frame is unreadable: {exc}") from exc
        return reply

    async def generate(
        self, prompt_ids: Sequence[int], max_new_tokens: int, *, stop_ids: Collection[int] = ()
    ) -> AsyncIterator[GeneratedToken]:
        """Prefill the prompt, then decode one token per step; yields tokens as produced."""
        feed: list[int] = list(prompt_ids)
        for produced in range(max_new_tokens):
            token = await self.step(feed)
            yield token
            if token.token_id in stop_ids or produced + 1 == max_new_tokens:
                return
            feed = [token.token_id]

    async def _exchange(self, hop: _Hop, frame: bytes) -> bytes:
        ws = self._ws(hop)
        try:
            async with asyncio.timeout(self._step_timeout_s):
                await ws.send(frame)
                reply = await ws.recv()
        except TimeoutError as exc:
            raise hop.fail(TIMEOUT, f"no reply within {self._step_timeout_s:.0f} s") from exc
        except ConnectionClosed as exc:
            raise _closed(hop, exc) from exc
        if isinstance(reply, str):
            raise _refusal(hop, reply, "a step reply")
        return reply

    # -- close -------------------------------------------------------------------------------

    async def close(self) -> list[HopReceipt]:
        """Close every hop (in order) and return their verified receipts.

        Every hop is closed even when one fails, so no node keeps a KV cache
        for a dead session; the first failure is raised afterwards.
        """
        receipts: list[HopReceipt] = []
        failure: RouteFailure | None = None
        for hop in self._hops:
            try:
                receipts.append(await self._close_hop(hop))
            except RouteFailure as exc:
                failure = failure or exc
            finally:
                await self._drop(hop)
        if failure is not None:
            raise failure
        return receipts

    async def _close_hop(self, hop: _Hop) -> HopReceipt:
        await self._send(hop, json.dumps({"type": "close"}))
        reply = await self._expect_text(hop, "receipt")
        try:
            receipt = verify_receipt(reply, hop.plan.public_key)
            digest = None
            if hop.last_reply is not None:
                digest = reply_output_digest(
                    hop.last_reply,
                    last_hop=hop.plan.end == self.plan.layer_count,
                    max_bytes=self._max_reply,
                )
            check_receipt_matches(
                receipt,
                route_session_id=self.plan.route_session_id,
                epoch=self.plan.epoch,
                hop=hop.plan.ticket_hop,
                steps=hop.steps,
                tokens=hop.tokens,
                output_sha256=digest,
            )
        except (ReceiptError, wire_frames.FrameError) as exc:
            raise hop.fail(BAD_RECEIPT, str(exc)) from exc
        return receipt

    async def receipt_now(self, hop_index: int) -> dict[str, Any] | None:
        """Close one hop at once and return its verified signed receipt, or None.

        An audit that convicts a hop calls this right after the disputed step,
        so the receipt's output_sha256 binds the node to the very output the
        audit found wrong (the route ends with the quarantine anyway).
        """
        hop = self._hops[hop_index]
        try:
            return (await self._close_hop(hop)).signed
        except RouteFailure as exc:
            log.info("hop %d gave no receipt for the audit: %s", hop_index, exc)
            return None
        finally:
            await self._drop(hop)

    async def abort(self) -> None:
        """Drop every connection without receipts (the nodes free the sessions)."""
        for hop in self._hops:
            await self._drop(hop)

    async def _drop(self, hop: _Hop) -> None:
        ws, hop.ws = hop.ws, None
        if ws is not None:
            try:
                await ws.close()
            except Exception:  # a dying connection must not mask the real failure
                log.debug("closing hop %d failed", hop.index, exc_info=True)

    # -- plumbing ----------------------------------------------------------------------------

    def _ws(self, hop: _Hop) -> ClientConnection:
        if hop.ws is None:
            raise hop.fail(PROTOCOL, "the hop is not open; call open() first")
        return hop.ws

    async def _send(self, hop: _Hop, text: str) -> None:
        try:
            await self._ws(hop).send(text)
        except ConnectionClosed as exc:
            raise _closed(hop, exc) from exc

    async def _expect_text(self, hop: _Hop, kind: str) -> dict[str, Any]:
        try:
            async with asyncio.timeout(self._open_timeout_s):
                reply = await self._ws(hop).recv()
        except TimeoutError as exc:
            raise hop.fail(
                TIMEOUT, f"no {kind!r} message within {self._open_timeout_s:.0f} s"
            ) from exc
        except ConnectionClosed as exc:
            raise _closed(hop, exc) from exc
        if not isinstance(reply, str):
            raise hop.fail(PROTOCOL, f"expected the node's {kind!r} message, got binary")
        parsed = _parse(hop, reply)
        if parsed.get("type") != kind:
            raise _refusal(hop, reply, f"the {kind!r} message")
        return parsed


def _parse(hop: _Hop, text: str) -> dict[str, Any]:
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


def _refusal(hop: _Hop, text: str, expected: str) -> RouteFailure:
    parsed = _parse(hop, text)
    if parsed.get("type") == "error":
        return hop.fail(
            str(parsed.get("reason") or PROTOCOL),
            str(parsed.get("message") or "the node refused the session"),
        )
    return hop.fail(PROTOCOL, f"expected {expected}, the node sent {parsed.get('type')!r}")


def _closed(hop: _Hop, exc: ConnectionClosed) -> RouteFailure:
    received = exc.rcvd
    if received is not None and received.code == 1009:
        return hop.fail(FRAME_TOO_LARGE, "the node dropped the connection: the frame was too large")
    if received is not None and received.code in (1008, 1011) and received.reason:
        return hop.fail(received.reason, "the node ended the session")
    code = received.code if received is not None else "none"
    return hop.fail(CONNECTION_CLOSED, f"the node closed the connection (close code {code})")
