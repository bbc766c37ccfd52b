"""The node's one outbound WebSocket to a relay, and the sessions that arrive over it.

A node the tracker cannot dial (a home router drops inbound connections)
dials out instead: ``GET <relay>/v1/link`` signed like every request to the
tracker, plus the public key (a relay keeps no registry). Each client stream
the relay opens becomes a :class:`RelayedConnection` served by the shard
server's own session handler; each plain GET (challenge, health, tokenizer)
is answered by the server's own GET handler. When the link drops, every
relayed session ends (its KV is freed) and the link is dialled again with
exponential back-off and jitter until the relay answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from core.dataplane import relay_mux
from core.dataplane.relay_stream import CLOSE_MESSAGE_TOO_BIG, RelayedConnection
from core.dataplane.relay_tunnel import (
    CLOSE_POLICY,
    PLAINTEXT_NODE_REASON,
    TLS_REQUIRED_REASON,
    TUNNEL_PATH,
    OpenLocal,
    pipe,
)
from core.errors import ProtocolError
from core.identity.keypair import b64encode
from core.identity.signing import (
    HEADER_NODE,
    HEADER_NONCE,
    HEADER_SIGNATURE,
    HEADER_TIMESTAMP,
    NONCE_BYTES,
    signed_request_message,
)

logger = logging.getLogger(__name__)

HEADER_PUBLIC_KEY = "X-Meshnet-Public-Key"
# The largest client message this node takes: the relay ends a stream that sends more,
# so one client's oversize frame never breaks the link every other stream shares.
HEADER_MAX_MESSAGE = "X-Meshnet-Max-Message"
LINK_SUFFIX = "/v1/link"
# A link that stayed up this long was healthy: the next failure starts the back-off over.
HEALTHY_LINK_S = 10.0

# Link states reported to on_state (the node turns them into status events).
CONNECTING, CONNECTED, RECONNECTING, STOPPED = "connecting", "connected", "reconnecting", "stopped"

Serve = Callable[[RelayedConnection], Awaitable[None]]
AnswerGet = Callable[[str], tuple[int, Mapping[str, str], bytes]]
OnState = Callable[[str, str], None]


class Backoff:
    """Exponential delays with jitter: many nodes of a restarted relay do not return at once."""

    def __init__(
        self,
        initial_s: float = 0.5,
        maximum_s: float = 30.0,
        factor: float = 2.0,
        jitter: float = 0.2,
        rng: random.Random | None = None,
    ) -> None:
        self.initial_s, self.maximum_s = initial_s, maximum_s
        self.factor, self.jitter = factor, jitter
        self._rng = rng or random.Random()
        self._next = initial_s

    def next(self) -> float:
        """The delay before the next attempt; each call grows the one after it."""
        base, self._next = self._next, min(self._next * self.factor, self.maximum_s)
        return base * (1.0 + self._rng.uniform(-self.jitter, self.jitter))

    def reset(self) -> None:
        self._next = self.initial_s


def relay_endpoint(relay_url: str, node_id: str) -> str:
    """Where clients reach a node through ``relay_url`` (``ws://host:port/relay``)."""
    return f"{relay_url.rstrip('/')}/{node_id}"


def link_headers(
    link_url: str,
    node_id: str,
    public_key: bytes,
    sign: Callable[[bytes], bytes],
    now: float | None = None,
) -> dict[str, str]:
    """The signed-request headers of the link handshake (core.identity.signing's form)."""
    timestamp = int(time.time() if now is None else now)
    nonce = secrets.token_hex(NONCE_BYTES)
    message = signed_request_message("GET", urlsplit(link_url).path, timestamp, nonce, b"")
    return {
        HEADER_NODE: node_id,
        HEADER_TIMESTAMP: str(timestamp),
        HEADER_NONCE: nonce,
        HEADER_SIGNATURE: b64encode(sign(message)),
        HEADER_PUBLIC_KEY: b64encode(public_key),
    }


class RelayLink:
    def __init__(
        self,
        relay_url: str,
        *,
        node_id: str,
        public_key: bytes,
        sign: Callable[[bytes], bytes],
        serve: Serve,
        answer_get: AnswerGet,
        max_message_bytes: int,
        on_state: OnState | None = None,
        backoff: Backoff | None = None,
        open_timeout_s: float = 10.0,
        tunnel: OpenLocal | None = None,
    ) -> None:
        """``tunnel``: how a node with TLS opens a connection to its own listener; with it,
        sessions come only as TLS through ``/v1/tunnel`` (core/dataplane/relay_tunnel.py)."""
        self.relay_url = relay_url.rstrip("/")
        self.link_url = self.relay_url + LINK_SUFFIX
        self.endpoint = relay_endpoint(self.relay_url, node_id)
        self._node_id = node_id
        self._public_key = public_key
        self._sign = sign
        self._serve = serve
        self._answer_get = answer_get
        self._max_message_bytes = max_message_bytes
        self._on_state = on_state
        self.backoff = backoff or Backoff()
        self._open_timeout_s = open_timeout_s
        self._tunnel = tunnel
        self._streams: dict[int, RelayedConnection] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._send_lock = asyncio.Lock()
        self._ws: ClientConnection | None = None
        self.state = CONNECTING
        self.connects = 0  # links made so far (a reconnect makes it 2, 3, ...)
        self.connected = asyncio.Event()

    # -- lifecycle -------------------------------------------------------------------------

    async def run_forever(self) -> None:
        """Hold the link; dial again after every loss. Ends only when cancelled."""
        try:
            while True:
                began = time.monotonic()
                try:
                    await self._hold_once()
                    why = "the relay closed the link"
                except InvalidStatus as exc:
                    why = f"the relay refused the link (HTTP {exc.response.status_code})"
                except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as exc:
                    why = f"cannot reach the relay at {self.relay_url}: {exc or type(exc).__name__}"
                except ConnectionClosed:
                    why = "the relay link dropped"
                self.connected.clear()
                await self._end_streams()
                if time.monotonic() - began >= HEALTHY_LINK_S:
                    self.backoff.reset()
                delay = self.backoff.next()
                self._set_state(RECONNECTING, f"{why}; trying again in {delay:.1f} s")
                await asyncio.sleep(delay)
        finally:
            self.connected.clear()
            await self._end_streams()
            self._set_state(STOPPED, "the relay link is closed")

    async def _hold_once(self) -> None:
        headers = link_headers(self.link_url, self._node_id, self._public_key, self._sign)
        headers[HEADER_MAX_MESSAGE] = str(self._max_message_bytes)
        async with connect(
            self.link_url,
            additional_headers=headers,
            max_size=self._max_message_bytes + relay_mux.HEADER_BYTES,
            compression=None,
            open_timeout=self._open_timeout_s,
            ping_interval=20,
            ping_timeout=20,
            close_timeout=3,
        ) as ws:
            self._ws = ws
            self.connects += 1
            self.connected.set()
            self._set_state(CONNECTED, f"serving through the relay at {self.relay_url}")
            try:
                async for message in ws:
                    if isinstance(message, str):
                        logger.warning("the relay sent a text message on the link; ignored")
                        continue
                    await self._dispatch(message)
            finally:
                self._ws = None

    def _set_state(self, state: str, sentence: str) -> None:
        self.state = state
        logger.info("relay link %s: %s", state, sentence)
        if self._on_state is not None:
            try:
                self._on_state(state, sentence)
            except Exception:  # a status listener must not take the link down
                logger.exception("relay state listener failed")

    # -- frames ----------------------------------------------------------------------------

    async def send_frame(self, frame: bytes) -> None:
        ws = self._ws
        if ws is None:
            raise ConnectionClosed(None, None)
        async with self._send_lock:
            await ws.send(frame)

    async def _dispatch(self, message: bytes) -> None:
        try:
            kind, stream_id, payload = relay_mux.decode(message)
        except ProtocolError as exc:
            logger.warning("ignored a bad frame from the relay: %s", exc)
            return
        if kind == relay_mux.OPEN:
            self._open(stream_id, payload)
        elif kind == relay_mux.HTTP:
            self._spawn(self._answer(stream_id, payload))
        elif kind in (relay_mux.TEXT, relay_mux.BINARY):
            stream = self._streams.get(stream_id)
            if stream is not None and not stream.feed(kind, payload):
                # Over the cap (or text that is not UTF-8): what a direct server does (1009).
                self._streams.pop(stream_id, None)
                await stream.close(CLOSE_MESSAGE_TOO_BIG, "message too big")
        elif kind == relay_mux.CLOSE:
            stream = self._streams.pop(stream_id, None)
            if stream is not None:
                stream.peer_closed(*relay_mux.parse_close(payload))
        else:
            logger.warning("ignored a relay frame of kind %d", kind)

    def _open(self, stream_id: int, payload: bytes) -> None:
        try:
            path, client = relay_mux.parse_open(payload)
        except ProtocolError as exc:
            logger.warning("ignored a bad OPEN from the relay: %s", exc)
            return
        stream = RelayedConnection(stream_id, client, self.send_frame, self._max_message_bytes)
        self._streams[stream_id] = stream
        wanted = urlsplit(path).path
        if wanted == TUNNEL_PATH and self._tunnel is not None:
            self._spawn(self._serve_stream(stream, self._tunnel))
        elif wanted == TUNNEL_PATH:
            self._spawn(stream.close(CLOSE_POLICY, PLAINTEXT_NODE_REASON))
        elif wanted == "/v1/session" and self._tunnel is not None:
            self._spawn(stream.close(CLOSE_POLICY, TLS_REQUIRED_REASON))
        elif wanted == "/v1/session":
            self._spawn(self._serve_stream(stream))
        else:
            self._spawn(stream.close(CLOSE_POLICY, "this node opens sessions at /v1/session only"))

    async def _serve_stream(
        self, stream: RelayedConnection, tunnel: OpenLocal | None = None
    ) -> None:
        try:
            if tunnel is None:
                await self._serve(stream)
            else:
                await pipe(stream, tunnel)
        finally:
            self._streams.pop(stream.stream_id, None)
            await stream.close(1000, "")

    async def _answer(self, stream_id: int, payload: bytes) -> None:
        try:
            status, headers, body = self._answer_get(payload.decode("utf-8", errors="replace"))
        except Exception:
            logger.exception("answering a relayed GET failed")
            status, headers, body = 500, {"Content-Type": "text/plain"}, b"node error"
        reply = relay_mux.encode(
            relay_mux.REPLY, stream_id, relay_mux.reply_payload(status, headers, body)
        )
        with contextlib.suppress(ConnectionClosed):
            await self.send_frame(reply)

    def _spawn(self, work: Awaitable[None]) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _end_streams(self) -> None:
        """The link is gone: every relayed session ends and frees its KV."""
        streams, self._streams = self._streams, {}
        for stream in streams.values():
            stream.peer_closed(1001, "the relay link closed")
        tasks = list(self._tasks)
        if tasks:
            await asyncio.wait(tasks, timeout=5.0)
