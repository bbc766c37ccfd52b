"""The shard server: a node's data plane on one port.

``/v1/session`` is the WebSocket a route client opens per hop per session (see
:mod:`core.dataplane.hop`); the same port answers a few plain HTTP GETs through
``process_request``: ``/v1/challenge`` (signed reachability proof),
``/v1/health`` and, when the node has one, ``/v1/tokenizer``.

The server runs its own asyncio loop, either inside the caller's loop
(``start_async``/``stop_async``) or in a background thread (``start``/``stop``)
because the node lifecycle is sync code.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import http
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response
from websockets.server import ServerProtocol

from core.dataplane import wire
from core.dataplane.batcher import BatchStats
from core.dataplane.challenge import answer_challenge
from core.dataplane.hop import MAX_CONTROL_BYTES, HopContext, HopSession, refuse
from core.dataplane.limits import ConnectionLimits
from core.dataplane.plain_http import PlainHttpConnection
from core.dataplane.tickets import TicketVerifier
from core.dataplane.tls import NodeCertificate, server_context
from core.dataplane.tls_listener import TlsListener
from core.errors import ConfigError, ProtocolError
from core.runtime.prefix_cache import describe as prefix_cache_health

if TYPE_CHECKING:
    from core.runtime.sessions import SessionManager

logger = logging.getLogger(__name__)

# Frames over max_frame_bytes but within this slack still get a JSON
# "frame-too-large" answer; past it the protocol layer drops the connection
# with close code 1009 before buffering more (HopClient maps both the same).
MIN_SLACK_BYTES = 64 * 1024
# A stopping node gives its sessions this long to close cleanly, then ends the rest: a
# peer that went silent mid-handshake must not hold a shutdown for its open timeout.
STOP_GRACE_S = 5.0
# A leaving node (paused for a game, stopping, moving) gives its sessions this long to
# read why they end and close, then cuts the rest: the owner's memory comes first, and
# a client that read ``node-leaving`` has failed over already.
LEAVE_GRACE_S = 0.5


class DataPlaneServer:
    """Serves this node's shard to route clients holding a tracker ticket."""

    def __init__(
        self,
        shard_sessions: SessionManager,
        node_id: str,
        public_key: bytes,
        sign: Callable[[bytes], bytes],
        tracker_public_key: Callable[[], bytes | None],
        fingerprint: Mapping[str, str],
        shard_range: tuple[int, int],
        max_frame_bytes: int,
        host: str = "127.0.0.1",
        port: int = 0,
        clock: Callable[[], float] = time.time,
        *,
        tokenizer_path: Path | None = None,
        expire_interval_s: float = 5.0,
        open_timeout_s: float = 30.0,
        limits: ConnectionLimits | None = None,
        tls: NodeCertificate | None = None,
    ) -> None:
        """``tls``: serve ``wss://`` with this certificate (its pin registered by the
        node); None serves plaintext ``ws://``, a development mode only."""
        if max_frame_bytes < 1024:
            raise ConfigError(f"max_frame_bytes must be at least 1024, got {max_frame_bytes}")
        self._sessions = shard_sessions
        self._node_id = node_id
        self._public_key = public_key
        self._sign = sign
        self._range = (int(shard_range[0]), int(shard_range[1]))
        self._max_frame_bytes = max_frame_bytes
        self._host = host
        self._port = port
        self._tokenizer_path = tokenizer_path
        self._tokenizer: bytes | None = None
        # The model folder's metadata a gateway checks against the identity's pins.
        self._metadata: dict[str, bytes] = {}
        self._expire_interval_s = expire_interval_s
        self._limits = limits or ConnectionLimits()
        self._tls = tls
        self._open_timeout_s = open_timeout_s
        self._max_message_bytes = max_frame_bytes + max(max_frame_bytes, MIN_SLACK_BYTES)
        self._ctx = HopContext(
            sessions=shard_sessions,
            verifier=TicketVerifier(
                node_id=node_id,
                shard_range=self._range,
                fingerprint=fingerprint,
                tracker_public_key=tracker_public_key,
                clock=clock,
            ),
            node_id=node_id,
            sign=sign,
            max_frame_bytes=max_frame_bytes,
            open_timeout_s=open_timeout_s,
            max_message_bytes=self._max_message_bytes,
            public_key=public_key,
        )
        self._server: Server | None = None
        self._expiry: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # -- addresses -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port (the real one when constructed with port 0)."""
        return self._port

    @property
    def open_connections(self) -> int:
        """Live WebSocket connections, counted against the connection caps."""
        return self._limits.total

    @property
    def tokens_served(self) -> int:
        """Positions this server has computed across every session since it started."""
        return self._ctx.tokens_served

    @property
    def batch_stats(self) -> BatchStats:
        """What the step schedule did (batched forwards, their sizes, prefill chunks)."""
        return self._ctx.batcher.stats

    @property
    def tls(self) -> NodeCertificate | None:
        """The certificate this port serves (None in plaintext development mode)."""
        return self._tls

    @property
    def scheme(self) -> str:
        return "ws" if self._tls is None else "wss"

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self._host}:{self._port}"

    @property
    def session_url(self) -> str:
        return self.url + wire.SESSION_PATH

    @property
    def http_url(self) -> str:
        scheme = "http" if self._tls is None else "https"
        return f"{scheme}://{self._host}:{self._port}"

    # -- async lifecycle -------------------------------------------------------------------

    async def start_async(self) -> None:
        if self._tokenizer_path is not None:
            self._tokenizer = await asyncio.to_thread(self._tokenizer_path.read_bytes)
            self._metadata = await asyncio.to_thread(_read_metadata, self._tokenizer_path.parent)
        server = serve(
            self._handle,
            self._host,
            self._port,
            process_request=self._process_request,
            # One plain request per connection, answered; garbage gets a 400.
            create_connection=PlainHttpConnection,
            max_size=self._max_message_bytes,
            compression=None,  # tensors do not deflate; save the CPU
            ping_interval=20,
            ping_timeout=20,
            close_timeout=3,  # a vanished client must not hold up stop() for long
        )
        if self._tls is not None:
            self._listen_tls(server, self._tls)
        try:
            self._server = await server
        except OSError as exc:
            raise ConfigError(
                f"the data plane cannot listen on {self._host}:{self._port}: {exc.strerror}; "
                "choose another port",
                reason="port-unavailable",
            ) from exc
        self._port = self._server.sockets[0].getsockname()[1]
        self._expiry = asyncio.create_task(self._expire_idle_forever())
        logger.info("data plane listening", extra={"url": self.url, "node_id": self._node_id})

    def _listen_tls(self, server: Server, certificate: NodeCertificate) -> None:
        """Put a :class:`TlsListener` where websockets would create its asyncio server:
        it peeks at each connection (a plaintext one gets a 400 naming wss://) and hands
        TLS ones, handshaken, to the same connection class and handler as plaintext."""
        context = server_context(certificate)

        def connection() -> PlainHttpConnection:
            protocol = ServerProtocol(max_size=self._max_message_bytes, logger=server.logger)
            return PlainHttpConnection(
                protocol, server, ping_interval=20, ping_timeout=20, close_timeout=3
            )

        listener = TlsListener(
            self._host, self._port, context, connection, handshake_timeout_s=self._open_timeout_s
        )
        # websockets' Server only closes, awaits and lists the sockets of what this returns.
        server.create_server = cast(Any, listener.start)

    async def stop_async(self, leaving: str | None = None) -> None:
        """Close every session and stop listening. ``leaving``: the node is leaving (a
        pause, a stop, a move): every open session is first told ``node-leaving`` with
        that sentence, so its client fails over at once instead of reading a bare close."""
        grace_s = STOP_GRACE_S
        if leaving is not None and self._server is not None:
            grace_s = LEAVE_GRACE_S
            await _refuse_all(self._server, wire.NODE_LEAVING, leaving, grace_s)
        if self._expiry is not None:
            self._expiry.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._expiry
            self._expiry = None
        if self._server is not None:
            await _close_server(self._server, grace_s)
            self._server = None
        await self._ctx.batcher.stop()

    async def __aenter__(self) -> DataPlaneServer:
        await self.start_async()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop_async()

    # -- thread lifecycle (sync callers) ----------------------------------------------------

    def start(self, timeout_s: float = 30.0) -> None:
        """Run the server on a background thread; returns once it is listening."""
        if self._server is not None or (self._thread is not None and self._thread.is_alive()):
            raise ConfigError(f"the data plane is already running at {self.url}")
        ready = threading.Event()
        failure: list[BaseException] = []

        def main() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self.start_async())
            except BaseException as exc:
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._thread = threading.Thread(target=main, name="meshnet-dataplane", daemon=True)
        self._thread.start()
        if not ready.wait(timeout_s):
            raise ConfigError(f"the data plane did not start within {timeout_s:.0f} s")
        if failure:
            self._thread.join()
            raise failure[0]

    def stop(self, timeout_s: float = 30.0, *, leaving: str | None = None) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or not thread.is_alive():
            return
        future = asyncio.run_coroutine_threadsafe(self.stop_async(leaving), loop)
        try:
            future.result(timeout_s)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout_s)
            self._loop = self._thread = None

    # -- WebSocket sessions ----------------------------------------------------------------

    async def _handle(self, ws: ServerConnection) -> None:
        # Until a ticket is verified only a small control message is read: a stranger's
        # half-sent frames cannot make the node buffer up to max_size per connection.
        ws.protocol.max_message_size = MAX_CONTROL_BYTES
        address = str(ws.remote_address[0]) if ws.remote_address else "unknown"
        refusal = self._limits.refusal(address)
        if refusal is not None:
            logger.info("connection refused: %s", refusal, extra={"address": address})
            await refuse(ws, wire.TOO_MANY_CONNECTIONS, refusal)
            return
        try:
            await HopSession(ws, self._ctx).run()
        finally:
            self._limits.release(address)

    # -- sessions and GETs that arrive over a relay link (core/dataplane/relay_link.py) ------

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The loop the server runs on when started with ``start`` (a relay link joins it)."""
        return self._loop

    async def serve_relayed(self, connection: Any) -> None:
        """Serve a session that came through a relay: the same caps and the same handler
        as a direct connection (``connection`` is a RelayedConnection, duck-typed)."""
        await self._handle(cast(ServerConnection, connection))

    async def open_tunnel(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A loopback connection to this server's own TLS port, for a relayed client's
        TLS (core/dataplane/relay_tunnel.py): its handshake ends at this node's key."""
        if self._server is None:
            raise OSError("the data plane is not listening")
        host, port = self._server.sockets[0].getsockname()[:2]
        if host in ("0.0.0.0", "::", ""):
            host = "::1" if host == "::" else "127.0.0.1"
        return await asyncio.open_connection(host, port)

    def answer_relayed_get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        """A plain GET that came through a relay, answered as a direct one would be."""
        request = Request(path, Headers())
        answer = self._process_request(cast(ServerConnection, None), request)
        if answer is None:
            return 400, {"Content-Type": "text/plain"}, b"open a session with a WebSocket"
        return answer.status_code, dict(answer.headers.raw_items()), bytes(answer.body)

    async def _expire_idle_forever(self) -> None:
        """Free sessions whose client went quiet, and tell those clients why."""
        while True:
            await asyncio.sleep(self._expire_interval_s)
            try:
                expired = await asyncio.to_thread(self._sessions.expire_idle)
            except Exception:
                logger.exception("expiring idle sessions failed")
                continue
            for session_id in expired:
                ws = self._ctx.live.pop(session_id, None)
                if ws is not None:
                    logger.info("hop session expired", extra={"session_id": session_id})
                    await refuse(
                        ws, wire.SESSION_EXPIRED, "the session was idle too long and was freed"
                    )

    # -- plain HTTP --------------------------------------------------------------------------

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        """GET answers; HEAD gets the GET's headers without its body; any other method
        (DELETE, PUT, garbage) is refused with 405 rather than answered as a GET."""
        if request.method not in ("GET", "HEAD"):
            refused = _json(
                http.HTTPStatus.METHOD_NOT_ALLOWED,
                {
                    "reason": "method-not-allowed",
                    "message": f"this node answers GET and HEAD only, not {request.method[:32]}",
                },
            )
            refused.headers["Allow"] = "GET, HEAD"
            return refused
        answer = self._answer_get(connection, request)
        if request.method == "HEAD":
            if answer is None:  # HEAD is no WebSocket handshake
                answer = _json(
                    http.HTTPStatus.METHOD_NOT_ALLOWED,
                    {"reason": "method-not-allowed", "message": "open a session with GET"},
                )
                answer.headers["Allow"] = "GET"
            return Response(answer.status_code, answer.reason_phrase, answer.headers, b"")
        return answer

    def _answer_get(self, connection: ServerConnection, request: Request) -> Response | None:
        url = urlsplit(request.path)
        if url.path == wire.SESSION_PATH:
            return None  # go on with the WebSocket handshake
        if url.path == wire.CHALLENGE_PATH:
            nonce = parse_qs(url.query).get("nonce", [None])[0]
            try:
                body = answer_challenge(
                    nonce or "", node_id=self._node_id, public_key=self._public_key, sign=self._sign
                )
            except ProtocolError as exc:
                return _json(
                    http.HTTPStatus.BAD_REQUEST, {"reason": exc.reason, "message": str(exc)}
                )
            return _json(http.HTTPStatus.OK, body)
        if url.path == wire.HEALTH_PATH:
            return _json(
                http.HTTPStatus.OK,
                {
                    "node_id": self._node_id,
                    "range": list(self._range),
                    "open_sessions": self._sessions.open_count,
                    # Positions computed so far: how far a backlog had got when health answered.
                    "tokens_served": self._ctx.tokens_served,
                    "kv_bytes_per_token": self._sessions.kv_bytes_per_token,
                    "kv_budget_bytes": self._sessions.kv_budget_bytes,
                    "kv_reserved_bytes": self._sessions.reserved_bytes,
                    # Decode forwards run and the steps they computed: rows / forwards is
                    # the mean batch, how well sessions shared their weight reads.
                    "decode_forwards": self._ctx.batcher.stats.forwards,
                    "decode_rows": self._ctx.batcher.stats.rows,
                    "prefix_cache": prefix_cache_health(self._sessions.prefix_cache),
                },
            )
        if url.path == wire.TOKENIZER_PATH and self._tokenizer is not None:
            return _response(
                http.HTTPStatus.OK,
                self._tokenizer,
                "application/json",
                {"X-Meshnet-Sha256": hashlib.sha256(self._tokenizer).hexdigest()},
            )
        name = wire.METADATA_PATHS.get(url.path)
        if name is not None and name in self._metadata:
            served = self._metadata[name]
            return _response(
                http.HTTPStatus.OK,
                served,
                "application/json",
                {"X-Meshnet-Sha256": hashlib.sha256(served).hexdigest()},
            )
        return _json(
            http.HTTPStatus.NOT_FOUND,
            {"reason": "not-found", "message": f"this node serves nothing at {url.path}"},
        )


def _read_metadata(folder: Path) -> dict[str, bytes]:
    """``config.json`` and ``tokenizer_config.json`` beside the tokenizer, when present."""
    found: dict[str, bytes] = {}
    for name in wire.METADATA_PATHS.values():
        path = folder / name
        if path.is_file():
            found[name] = path.read_bytes()
    return found


def _json(status: http.HTTPStatus, body: dict[str, Any]) -> Response:
    return _response(status, json.dumps(body).encode("utf-8"), "application/json")


def _response(
    status: http.HTTPStatus, body: bytes, content_type: str, extra: Mapping[str, str] | None = None
) -> Response:
    headers = Headers(
        [
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            ("Connection", "close"),
            *(extra or {}).items(),
        ]
    )
    return Response(status.value, status.phrase, headers, body)


async def _refuse_all(server: Server, reason: str, message: str, grace_s: float) -> None:
    """Tell every open session why it ends and end it (the node is leaving); a step being
    computed finishes, but its reply finds the session closed. Bounded by ``grace_s``."""
    connections = list(server.connections)
    if not connections:
        return
    logger.info("ending %d open session(s): %s", len(connections), reason)
    told = [asyncio.ensure_future(refuse(c, reason, message)) for c in connections]
    _, late = await asyncio.wait(told, timeout=grace_s)
    for task in late:
        task.cancel()


async def _close_server(server: Server, grace_s: float = STOP_GRACE_S) -> None:
    """Close every session with going-away (handlers free their KV); sessions still open
    after ``grace_s`` are cut and their handlers cancelled, and the stop goes on even if
    one of them still hangs (a stopping node must stop)."""
    server.close()
    closed = asyncio.ensure_future(server.wait_closed())
    done, _ = await asyncio.wait({closed}, timeout=grace_s)
    if done:
        return
    logger.warning(
        "%d session(s) still open %.1f s after stop; cutting them",
        len(server.handler_tasks),
        grace_s,
    )
    for connection in list(server.all_connections):
        connection.transport.abort()
    for task in list(server.handler_tasks):
        task.cancel()
    done, _ = await asyncio.wait({closed}, timeout=STOP_GRACE_S)
    if not done:
        closed.cancel()
        logger.error(
            "%d session handler(s) did not end; stopping anyway", len(server.handler_tasks)
        )
