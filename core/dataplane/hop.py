"""One hop of one route session: the life of a single data-plane WebSocket.

open (ticket) -> steps (safetensors frames) -> close (signed receipt). Every
refusal ends *this* session with ``{"type": "error", "reason", "message"}`` and
frees its KV cache; the server and its other sessions keep serving. Steps go to
the server's one ``StepBatcher`` (batcher.py): decode steps of all sessions run
batched, prefills in chunks, in a worker thread, so one session's compute never
stalls another session's I/O.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from core.dataplane import chain, frames, wire
from core.dataplane.batcher import StepBatcher
from core.dataplane.receipts import HopReceipt, frame_digest, sign_receipt
from core.dataplane.ticket_uses import TicketUses
from core.dataplane.tickets import TicketGrant, TicketVerifier
from core.errors import (
    CapacityError,
    ConfigError,
    MeshnetError,
    ProtocolError,
    RangeError,
    RuntimeInputError,
    SessionError,
)
from core.runtime.sessions import SamplingParams, StepResult

if TYPE_CHECKING:
    from core.runtime.sessions import InferenceSession, SessionManager

logger = logging.getLogger(__name__)

MAX_CONTROL_BYTES = 64 * 1024  # an open/close message is a few hundred bytes
MAX_LOGPROBS = 20
# Replies of at most this many positions are serialized on the event loop; longer
# ones (a prefill's hidden states) in a worker thread so the loop stays live.
INLINE_STEP_POSITIONS = 4
# Runtime refusals that are the node's own failure, not the client's input.
NODE_FAULTS = frozenset({"step-failed", "non-finite-logits"})
WIRE_REASONS = frozenset(
    {
        wire.BAD_TICKET,
        wire.TICKET_EXPIRED,
        wire.WRONG_NODE,
        wire.WRONG_RANGE,
        wire.WRONG_FINGERPRINT,
        wire.FRAME_TOO_LARGE,
        wire.BAD_FRAME,
        wire.BAD_SHAPE,
        wire.POSITION_OUT_OF_RANGE,
        wire.NO_CAPACITY,
        wire.SESSION_EXPIRED,
        wire.BAD_REQUEST,
        wire.CHAIN_REFUSED,
        wire.CHAIN_BROKEN,
    }
)


@dataclass
class HopContext:
    """What every hop on this server shares."""

    sessions: SessionManager
    verifier: TicketVerifier
    node_id: str
    sign: Callable[[bytes], bytes]
    max_frame_bytes: int
    open_timeout_s: float
    live: dict[str, ServerConnection] = field(default_factory=dict)
    # The message size a session may send once its ticket is verified (the server's
    # max_size); before that only a control message of MAX_CONTROL_BYTES is read.
    max_message_bytes: int | None = None
    # Tickets that already opened a session here: one session per hop per ticket.
    ticket_uses: TicketUses = field(default_factory=TicketUses)
    batcher: StepBatcher = field(default_factory=StepBatcher)
    # Positions computed across all sessions: the node reports it in heartbeats.
    tokens_served: int = 0
    # The node's key, which a chained hop shows its successor (chain.py).
    public_key: bytes = b""
    # Sessions opened as chain hops, waiting for their predecessor's link.
    chains: chain.ChainWaits = field(default_factory=chain.ChainWaits)


def wire_reason(exc: MeshnetError) -> str:
    """Map a core error to the reason code the wire contract names."""
    if exc.reason in WIRE_REASONS:
        return exc.reason
    if exc.reason in NODE_FAULTS:
        return wire.INTERNAL_ERROR
    if isinstance(exc, CapacityError):
        return wire.NO_CAPACITY
    if isinstance(exc, SessionError):
        return wire.SESSION_EXPIRED
    if isinstance(exc, RangeError):
        return wire.WRONG_RANGE
    if isinstance(exc, RuntimeInputError | ProtocolError | ConfigError):
        return wire.BAD_FRAME
    return wire.INTERNAL_ERROR


async def refuse(ws: ServerConnection, reason: str, message: str) -> None:
    """Tell the client why its session ends, then end it (close code 1008/1011)."""
    code = 1011 if reason == wire.INTERNAL_ERROR else 1008
    try:
        await ws.send(wire.error_message(reason, message))
        await ws.close(code, reason)
    except ConnectionClosed:
        pass


def _bad(message: str) -> ProtocolError:
    return ProtocolError(message, reason=wire.BAD_FRAME)


def _bad_request(message: str) -> ProtocolError:
    return ProtocolError(message, reason=wire.BAD_REQUEST)


# torch.Generator.manual_seed takes [-2**63, 2**64); anything else raises at open.
SEED_RANGE = (-(2**63), 2**64 - 1)


def _control(message: str | bytes) -> dict[str, Any]:
    """A client text frame as a JSON object with a ``type``."""
    if not isinstance(message, str):
        raise _bad("expected a JSON text message here, got binary")
    if len(message) > MAX_CONTROL_BYTES:
        raise ProtocolError(
            f"a control message of {len(message)} bytes is over {MAX_CONTROL_BYTES}",
            reason=wire.FRAME_TOO_LARGE,
        )
    try:
        parsed = json.loads(message)
    except json.JSONDecodeError as exc:
        raise _bad("the control message is not JSON") from exc
    except RecursionError as exc:  # nested thousands deep: refuse, no traceback in the log
        raise _bad("the control message nests too deeply") from exc
    if not isinstance(parsed, dict) or not isinstance(parsed.get("type"), str):
        raise _bad("a control message is a JSON object with a 'type'")
    return parsed


def parse_sampling(raw: object) -> SamplingParams:
    """The last hop's sampling settings, range-checked (unknown keys are ignored)."""
    if raw is None:
        return SamplingParams()
    if not isinstance(raw, dict):
        raise _bad_request("'sampling' must be a JSON object")
    temperature = raw.get("temperature", 0.0)
    top_k, top_p = raw.get("top_k", 0), raw.get("top_p", 1.0)
    seed, logprobs = raw.get("seed"), raw.get("logprobs", 0)
    if not _number(temperature) or not 0.0 <= float(temperature) <= 100.0:
        raise _bad_request(
            f"sampling temperature must be a number in [0, 100], got {temperature!r}"
        )
    if not _integer(top_k) or top_k < 0:
        raise _bad_request(f"sampling top_k must be an integer >= 0, got {top_k!r}")
    if not _number(top_p) or not 0.0 < float(top_p) <= 1.0:
        raise _bad_request(f"sampling top_p must be in (0, 1], got {top_p!r}")
    if seed is not None and (not _integer(seed) or not SEED_RANGE[0] <= seed <= SEED_RANGE[1]):
        raise _bad_request(
            f"sampling seed must be null or an integer in [{SEED_RANGE[0]}, {SEED_RANGE[1]}], "
            f"got {seed!r}"
        )
    if not _integer(logprobs) or not 0 <= logprobs <= MAX_LOGPROBS:
        raise _bad_request(
            f"sampling logprobs must be an integer in [0, {MAX_LOGPROBS}], got {logprobs!r}"
        )
    return SamplingParams(
        temperature=float(temperature),
        top_k=top_k,
        top_p=float(top_p),
        seed=seed,
        logprobs=logprobs,
    )


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _close_when_opened(allocation: asyncio.Future[InferenceSession]) -> None:
    if not allocation.cancelled() and allocation.exception() is None:
        allocation.result().close()


class HopSession:
    """Serves one WebSocket; ``run`` never raises (the server must keep serving)."""

    BATCH_SIZE = 1  # the open message carries no batch size (docs/wire.md#session-messages)

    def __init__(self, ws: ServerConnection, ctx: HopContext) -> None:
        self._ws = ws
        self._ctx = ctx
        self._shard = ctx.sessions.shard
        self._session_id: str | None = None
        self._grant: TicketGrant | None = None
        self._steps = 0
        self._tokens = 0
        self._output_sha256: str | None = None  # the last step's output, for the receipt
        # The client asked for a signed receipt after every step reply (docs/wire.md#step-receipts).
        self._step_receipts = False
        # A chained hop (chain.py): it forwards each output over `_downstream` (unless it is
        # the last hop) and, past the first hop, takes its steps from its predecessor's link.
        self._chain = False
        self._downstream: ClientConnection | None = None
        self._linked = asyncio.Event()  # the predecessor's link arrived
        self._link_key: chain.LinkKey | None = None
        self._link_peer: bytes = b""  # the predecessor's key: it signs each step it passes
        self._link_steps = 0  # steps taken from the link (each names its number)
        self._passed_steps = 0  # steps passed on to the successor

    async def run(self) -> None:
        try:
            await self._serve()
        except MeshnetError as exc:
            logger.info(
                "hop session refused: %s (%s)", exc.reason, exc, extra={"reason": exc.reason}
            )
            await refuse(self._ws, wire_reason(exc), exc.message)
        except ConnectionClosed:
            logger.info("hop client went away", extra={"session_id": self._session_id})
        except Exception:
            logger.exception("hop session failed on the node's side")
            await refuse(self._ws, wire.INTERNAL_ERROR, "the node failed computing this step")
        finally:
            self._release()
            await self._unlink()

    async def _serve(self) -> None:
        try:
            first = await asyncio.wait_for(self._ws.recv(), self._ctx.open_timeout_s)
        except TimeoutError as exc:
            raise _bad(f"no open message within {self._ctx.open_timeout_s:.0f} s") from exc
        opening = _control(first)
        if opening["type"] == "link":  # a predecessor's link into a chained session here
            await self._serve_link(opening)
            return
        await self._open(opening)
        async for message in self._ws:
            if isinstance(message, str):
                control = _control(message)
                if control["type"] == "receipt":
                    # A hop audit's binding: the receipt so far, the session goes on.
                    await self._ws.send(json.dumps({"type": "receipt", **self._signed_receipt()}))
                    continue
                if control["type"] != "close":
                    raise _bad(f"unexpected control message {control['type']!r} in a session")
                await self._close_with_receipt()
                return
            if self._link_key is not None:
                raise _bad_request(
                    "this hop of a chained route takes its steps from the previous hop, "
                    "not from the client"
                )
            await self._answer(message)
            # A pipelined backlog is already buffered, so neither recv nor send
            # suspends: yield once per step so health checks and other sessions
            # take turns with this one instead of waiting for the whole backlog.
            await asyncio.sleep(0)

    async def _open(self, opening: dict[str, Any]) -> None:
        if opening["type"] != "open":
            raise _bad(f"a session starts with an 'open' message, got {opening['type']!r}")
        self._grant = grant = self._ctx.verifier.verify(opening.get("ticket"))
        self._ctx.ticket_uses.claim(grant.ticket)
        if self._ctx.max_message_bytes is not None:  # a verified ticket: frames may come
            self._ws.protocol.max_message_size = self._ctx.max_message_bytes
        max_length = opening.get("max_length")
        if not isinstance(max_length, int) or isinstance(max_length, bool) or max_length < 1:
            raise _bad_request(f"max_length must be a positive integer, got {max_length!r}")
        sampling = parse_sampling(opening.get("sampling")) if self._shard.is_last else None
        wants_chain = opening.get("chain", False)
        if not isinstance(wants_chain, bool):
            raise _bad_request(f"chain must be true or false, got {wants_chain!r}")
        step_receipts = opening.get("step_receipts", False)
        if not isinstance(step_receipts, bool):
            raise _bad_request(f"step_receipts must be true or false, got {step_receipts!r}")
        if wants_chain and not grant.is_last and grant.hop.next is None:
            raise ProtocolError(
                "the route ticket offers this route no chain; open it without 'chain'",
                reason=wire.CHAIN_REFUSED,
            )
        allocation = asyncio.ensure_future(
            asyncio.to_thread(
                self._ctx.sessions.open,
                max_length,
                batch_size=self.BATCH_SIZE,
                sampling=sampling,
                start_layer=grant.hop.effective_start,
                end_layer=grant.hop.stop,
            )
        )
        try:
            session: InferenceSession = await asyncio.shield(allocation)
        except asyncio.CancelledError:
            # The server is stopping mid-open: the KV is still being allocated in a
            # worker thread; free it once it exists instead of leaking it.
            allocation.add_done_callback(_close_when_opened)
            raise
        self._session_id = session.session_id
        self._step_receipts = step_receipts
        self._ctx.live[session.session_id] = self._ws
        if wants_chain and len(grant.ticket.hops) > 1:
            await self._join_chain(opening.get("ticket"), grant)
        logger.info(
            "hop session opened",
            extra={"session_id": session.session_id, "route": grant.ticket.route_session_id},
        )
        await self._ws.send(
            json.dumps(
                {
                    "type": "opened",
                    "session_id": session.session_id,
                    "node_id": self._ctx.node_id,
                    "layers": [grant.hop.effective_start, grant.hop.stop],
                    "kv_bytes_per_token": self._shard.kv_bytes_per_token(session.start_layer),
                    "interim_receipts": True,  # answers {"type": "receipt"} mid-session
                    "step_receipts": self._step_receipts,  # a signed receipt after each reply
                    "speculative_steps": True,  # takes rewind and verify step frames
                    "chained_hops": True,  # opens as a chain hop when asked (chain.py)
                    "chain": self._chain,
                }
            )
        )

    async def _join_chain(self, signed_ticket: object, grant: TicketGrant) -> None:
        """Become a chain hop: dial the successor the ticket names (unless last), and past
        the first hop wait for the predecessor's link, before the session is opened."""
        self._chain = True
        if grant.index > 0:
            self._link_key = chain.LinkKey.of(grant)
            self._ctx.chains.offer(self._link_key, self)
        if not grant.is_last:
            self._downstream = await chain.dial_successor(
                signed_ticket,
                grant,
                node_id=self._ctx.node_id,
                public_key=self._ctx.public_key,
                sign=self._ctx.sign,
                max_size=self._ctx.max_message_bytes,
                open_timeout_s=min(self._ctx.open_timeout_s, chain.DIAL_TIMEOUT_S),
            )
        if self._link_key is not None:
            wait_s = min(self._ctx.open_timeout_s, chain.LINK_WAIT_S)
            try:
                await asyncio.wait_for(self._linked.wait(), wait_s)
            except TimeoutError as exc:
                raise ProtocolError(
                    f"the previous hop did not link within {wait_s:.0f} s",
                    reason=wire.CHAIN_BROKEN,
                ) from exc

    async def _serve_link(self, opening: dict[str, Any]) -> None:
        """A predecessor's link: admitted by ticket and signature, it feeds the chained
        session the client opened here; each frame on it is a step of that session."""
        grant = self._ctx.verifier.verify(opening.get("ticket"))
        peer = chain.check_link(opening, grant)
        # Bounded, and given up when the link closes: a server stopping closes every
        # connection, and a handler still waiting here would hold its stop up.
        claim = asyncio.ensure_future(
            self._ctx.chains.claim(
                chain.LinkKey.of(grant), min(self._ctx.open_timeout_s, chain.LINK_WAIT_S)
            )
        )
        closed = asyncio.ensure_future(self._ws.wait_closed())
        await asyncio.wait({claim, closed}, return_when=asyncio.FIRST_COMPLETED)
        closed.cancel()
        if not claim.done():
            claim.cancel()
            raise ConnectionClosed(None, None)
        target: HopSession = claim.result()
        if self._ctx.max_message_bytes is not None:  # an admitted link: frames may come
            self._ws.protocol.max_message_size = self._ctx.max_message_bytes
        await self._ws.send(json.dumps({"type": "linked"}))
        target.linked(peer)
        logger.info("chain link admitted", extra={"route": grant.ticket.route_session_id})
        async for message in self._ws:
            if isinstance(message, str):
                raise _bad("a chain link carries step frames only")
            await target.linked_step(message)
        logger.info("chain link closed", extra={"route": grant.ticket.route_session_id})

    def linked(self, peer: bytes) -> None:
        self._link_peer = peer
        self._linked.set()

    async def linked_step(self, data: bytes) -> None:
        """A step its predecessor passed this chained session. A refusal ends the session
        for its client too, as a refused client step would."""
        if self._session_id is None:
            raise ProtocolError("the session this link fed has ended", reason=wire.CHAIN_BROKEN)
        try:
            await self._answer(data)
        except MeshnetError as exc:
            logger.info("chained step refused: %s (%s)", exc.reason, exc)
            await refuse(self._ws, wire_reason(exc), exc.message)
            raise
        except ConnectionClosed:
            # the client went away; its session ends with its own connection
            raise ProtocolError(
                "the client of this chained session went away", reason=wire.CHAIN_BROKEN
            ) from None

    async def _answer(self, data: bytes) -> None:
        """Compute one step; a chain hop forwards its output to the next hop first (the
        critical path), then every hop sends its reply to its client (and, when asked, its
        signed receipt for the steps so far)."""
        if self._chain and not self._is_last_hop() and self._downstream is None:
            raise ProtocolError("the next hop of this chain went away", reason=wire.CHAIN_BROKEN)
        reply, header = await self._step(data)
        downstream = self._downstream
        if downstream is not None:
            assert self._grant is not None
            self._passed_steps += 1
            forward = chain.signed_forward(
                reply,
                frames.step_keys(header.metadata),
                self._grant,
                node_id=self._ctx.node_id,
                sign=self._ctx.sign,
                seq=self._passed_steps,
            )
            try:
                await downstream.send(forward)
            except ConnectionClosed:
                logger.info(
                    "the next hop of a chain went away", extra={"session_id": self._session_id}
                )
                self._downstream = None  # the client reads the next hop's failure itself
        await self._ws.send(reply)
        if self._step_receipts:
            # Signed after the reply is on its way: the node binds itself to every output
            # without knowing which step an audit samples.
            await self._ws.send(json.dumps({"type": "step-receipt", **self._signed_receipt()}))

    def _is_last_hop(self) -> bool:
        return self._grant is not None and self._grant.is_last

    async def _step(self, data: bytes) -> tuple[bytes, frames.FrameHeader]:
        if self._session_id is None:
            raise SessionError("the session has ended", reason=wire.SESSION_EXPIRED)
        header = frames.read_header(data, self._ctx.max_frame_bytes)  # size checked first
        # A linked step's fields are its predecessor's signed word, checked before any is used.
        passed: dict[str, str] = {}
        if self._link_key is not None:
            assert self._grant is not None
            passed = chain.check_passed_step(
                data, header, self._grant, self._link_peer, due=self._link_steps + 1
            )
            self._link_steps += 1
        session = self._ctx.sessions.get(self._session_id)
        want = frames.StepExpectation(
            is_first=session.takes_tokens,  # a first shard opened inside takes hidden states
            hidden_size=self._shard.config.hidden_size,
            hidden_dtype=self._shard.compute_dtype,
            batch_size=self.BATCH_SIZE,
            position=session.position,
            max_length=session.max_length,
        )
        positions = frames.check_step_header(header, want)
        frame = frames.decode_frame(data, self._ctx.max_frame_bytes)
        inputs = next(iter(frame.tensors.values()))  # token range, NaN: the runtime checks
        at = int(header.metadata[frames.POSITION_KEY])  # checked: a rewind, or the position
        if at < session.position:  # drafts the route rejected: forget them, then go on
            session.rewind(at)
        verify = session.is_last and header.metadata.get(frames.VERIFY_KEY) == "1"
        draft = frames.draft_of(header.metadata, positions) if verify else None
        began = time.perf_counter()
        cached, replied = 0, None
        if positions > INLINE_STEP_POSITIONS and session.position == 0:
            # a prefill: take the longest prefix this node computed recently
            cached, replied = await asyncio.to_thread(
                self._ctx.sessions.restore_prefix, session, inputs
            )
        rest = inputs.narrow(1, cached, positions - cached) if cached else inputs
        try:
            result = await self._ctx.batcher.submit(session, rest, verify=verify, draft=draft)
        except MeshnetError:
            if cached:  # a refused suffix leaves no half of the prompt either
                with contextlib.suppress(MeshnetError):
                    session.rewind(0)
            raise
        if replied is not None and result.hidden is not None:
            hidden = torch.cat([replied.to(result.hidden.device), result.hidden], dim=1)
            result = StepResult(hidden=hidden)  # (1, T, H): every position, as asked
        compute_ms = (time.perf_counter() - began) * 1000.0
        meta = {frames.COMPUTE_MS_KEY: f"{compute_ms:.3f}"}
        if cached:
            meta[frames.CACHED_KEY] = str(cached)
        meta.update(passed)  # what the predecessor passed and signed, for the client to check
        if positions <= INLINE_STEP_POSITIONS:
            reply = self._reply(result, meta)
        else:
            reply = await asyncio.to_thread(self._reply, result, meta)
        self._steps += 1
        self._tokens += positions * self.BATCH_SIZE
        self._ctx.tokens_served += positions * self.BATCH_SIZE
        return reply, header

    def _reply(self, result: StepResult, meta: dict[str, str]) -> bytes:
        if result.hidden is not None:  # a shard not last, or a session stopping inside it
            reply = frames.encode_frame({frames.HIDDEN: result.hidden}, meta)
            self._output_sha256 = frame_digest(reply)
            return reply
        if result.token_ids is None:
            raise RuntimeError("the last shard returned no token ids")
        token_ids = result.token_ids
        rows = token_ids.shape[0]
        empty_ids = torch.zeros((rows, 0), dtype=torch.int64)
        top_ids = result.top_ids if result.top_ids is not None else empty_ids
        top_logprobs = (
            result.top_logprobs
            if result.top_logprobs is not None
            else torch.zeros((rows, 0), dtype=torch.float32)
        )
        reply = frames.encode_frame(
            {
                frames.TOKEN_IDS: token_ids.to(torch.int64),
                frames.TOP_IDS: top_ids.to(torch.int64),
                frames.TOP_LOGPROBS: top_logprobs.to(torch.float32),
            },
            meta,
        )
        # The whole reply is bound: its token ids, the top ids and log-probs a gateway
        # samples from, and a verify step's kept drafts (docs/wire.md#hop-receipts).
        self._output_sha256 = frame_digest(reply)
        return reply

    def _signed_receipt(self) -> dict[str, Any]:
        """The receipt for the steps so far, signed by the node key."""
        assert self._grant is not None
        grant = self._grant
        receipt = HopReceipt(
            route_session_id=grant.ticket.route_session_id,
            epoch=grant.ticket.epoch,
            node_id=self._ctx.node_id,
            start=grant.hop.effective_start,
            end=grant.hop.stop,
            steps=self._steps,
            tokens=self._tokens,
            output_sha256=self._output_sha256,
        )
        return sign_receipt(receipt, self._ctx.sign)

    async def _close_with_receipt(self) -> None:
        assert self._grant is not None
        grant = self._grant
        signed = self._signed_receipt()
        self._release()  # free the KV before the (possibly slow) goodbye
        await self._ws.send(json.dumps({"type": "receipt", **signed}))
        await self._ws.close(1000, "session closed")
        logger.info(
            "hop session closed with receipt",
            extra={"route": grant.ticket.route_session_id, "steps": self._steps},
        )

    async def _unlink(self) -> None:
        """Close the link to the next hop; that hop's session ends with its own client."""
        downstream, self._downstream = self._downstream, None
        if downstream is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(downstream.close(), 3.0)

    def _release(self) -> None:
        if self._link_key is not None:
            self._ctx.chains.withdraw(self._link_key)
        session_id, self._session_id = self._session_id, None
        if session_id is None:
            return
        self._ctx.live.pop(session_id, None)
        with contextlib.suppress(SessionError):  # already expired or closed: nothing to free
            self._ctx.sessions.close(session_id)
        self._ctx.batcher.wake()  # a batch waiting for this session's next step goes now
