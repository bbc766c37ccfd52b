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
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from core.dataplane import frames, wire
from core.dataplane.batcher import StepBatcher
from core.dataplane.lie import Lie
from core.dataplane.receipts import HopReceipt, frame_digest, sign_receipt, token_digest
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
    # Tests of the hop audits only: None unless MESHNET_TEST_LIE_RATE is set (lie.py).
    lie: Lie | None = field(default_factory=Lie.from_env)


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

    async def _serve(self) -> None:
        try:
            first = await asyncio.wait_for(self._ws.recv(), self._ctx.open_timeout_s)
        except TimeoutError as exc:
            raise _bad(f"no open message within {self._ctx.open_timeout_s:.0f} s") from exc
        await self._open(_control(first))
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
            await self._ws.send(await self._step(message))
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
        allocation = asyncio.ensure_future(
            asyncio.to_thread(
                self._ctx.sessions.open,
                max_length,
                batch_size=self.BATCH_SIZE,
                sampling=sampling,
                start_layer=grant.hop.effective_start,
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
        self._ctx.live[session.session_id] = self._ws
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
                    "layers": [grant.hop.effective_start, grant.hop.end],
                    "kv_bytes_per_token": self._shard.kv_bytes_per_token(session.start_layer),
                    "interim_receipts": True,  # answers {"type": "receipt"} mid-session
                    "speculative_steps": True,  # takes rewind and verify step frames
                }
            )
        )

    async def _step(self, data: bytes) -> bytes:
        assert self._session_id is not None
        header = frames.read_header(data, self._ctx.max_frame_bytes)  # size checked first
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
        verify = self._shard.is_last and header.metadata.get(frames.VERIFY_KEY) == "1"
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
        if positions <= INLINE_STEP_POSITIONS:
            reply = self._reply(result, compute_ms, cached)
        else:
            reply = await asyncio.to_thread(self._reply, result, compute_ms, cached)
        self._steps += 1
        self._tokens += positions * self.BATCH_SIZE
        self._ctx.tokens_served += positions * self.BATCH_SIZE
        return reply

    def _reply(self, result: StepResult, compute_ms: float, cached: int = 0) -> bytes:
        meta = {frames.COMPUTE_MS_KEY: f"{compute_ms:.3f}"}
        if cached:
            meta[frames.CACHED_KEY] = str(cached)
        liar = self._ctx.lie
        lie = liar is not None and liar.now()
        if not self._shard.is_last:
            if result.hidden is None:
                raise RuntimeError("a non-last shard returned no hidden states")
            hidden = liar.hidden(result.hidden) if lie and liar else result.hidden
            reply = frames.encode_frame({frames.HIDDEN: hidden}, meta)
            self._output_sha256 = frame_digest(reply)
            return reply
        if result.token_ids is None:
            raise RuntimeError("the last shard returned no token ids")
        token_ids = result.token_ids
        if lie and liar:
            token_ids = liar.tokens(token_ids, int(getattr(self._shard.config, "vocab_size", 2)))
        self._output_sha256 = token_digest(token_ids.reshape(-1).tolist())
        rows = token_ids.shape[0]
        empty_ids = torch.zeros((rows, 0), dtype=torch.int64)
        top_ids = result.top_ids if result.top_ids is not None else empty_ids
        top_logprobs = (
            result.top_logprobs
            if result.top_logprobs is not None
            else torch.zeros((rows, 0), dtype=torch.float32)
        )
        return frames.encode_frame(
            {
                frames.TOKEN_IDS: token_ids.to(torch.int64),
                frames.TOP_IDS: top_ids.to(torch.int64),
                frames.TOP_LOGPROBS: top_logprobs.to(torch.float32),
            },
            meta,
        )

    def _signed_receipt(self) -> dict[str, Any]:
        """The receipt for the steps so far, signed by the node key."""
        assert self._grant is not None
        grant = self._grant
        receipt = HopReceipt(
            route_session_id=grant.ticket.route_session_id,
            epoch=grant.ticket.epoch,
            node_id=self._ctx.node_id,
            start=grant.hop.effective_start,
            end=grant.hop.end,
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

    def _release(self) -> None:
        session_id, self._session_id = self._session_id, None
        if session_id is None:
            return
        self._ctx.live.pop(session_id, None)
        with contextlib.suppress(SessionError):  # already expired or closed: nothing to free
            self._ctx.sessions.close(session_id)
        self._ctx.batcher.wake()  # a batch waiting for this session's next step goes now
