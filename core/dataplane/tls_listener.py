"""The data plane's listening socket when it speaks TLS: peek first, then handshake.

A TLS port that meets a plaintext client normally just drops it, and the person
who typed ``ws://`` sees a reset. This listener peeks at each connection's first
byte: a TLS record (``0x16``, a ClientHello) goes on to the handshake and then to
the websockets server; anything else gets a plain ``HTTP 400`` saying the node
speaks ``wss://`` only, and is closed. It stands in for the ``asyncio.Server`` a
websockets ``Server`` wraps (close, wait_closed, sockets, is_serving, ...).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import select
import socket
import ssl
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)

TLS_HANDSHAKE_RECORD = 0x16
TLS_REQUIRED = "tls-required"
_MESSAGE = (
    "this node's data plane speaks TLS only: connect with wss:// (https:// for its GETs) "
    "and check the certificate against the pin the tracker publishes"
)


def plaintext_refusal() -> bytes:
    body = json.dumps({"reason": TLS_REQUIRED, "message": _MESSAGE}).encode("utf-8")
    head = (
        "HTTP/1.1 400 Bad Request\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class TlsListener:
    """Accepts on one socket; TLS connections are handed to ``protocol_factory``."""

    def __init__(
        self,
        host: str,
        port: int,
        context: ssl.SSLContext,
        protocol_factory: Callable[[], asyncio.Protocol],
        *,
        handshake_timeout_s: float,
    ) -> None:
        self._host = host
        self._port = port
        self._context = context
        self._factory = protocol_factory
        self._timeout_s = handshake_timeout_s
        self._sock: socket.socket | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._accepting: asyncio.Task[None] | None = None
        self._pending: set[asyncio.Task[None]] = set()

    async def start(self) -> TlsListener:
        self._loop = asyncio.get_running_loop()
        family, _, _, _, address = socket.getaddrinfo(
            self._host, self._port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.create_server(address[:2], family=family, backlog=512)
        sock.setblocking(False)
        self._sock = sock
        self._accepting = self._loop.create_task(self._accept_forever(sock))
        return self

    # -- what websockets' Server calls on its asyncio.Server -------------------------------

    @property
    def sockets(self) -> tuple[socket.socket, ...]:
        return () if self._sock is None else (self._sock,)

    def is_serving(self) -> bool:
        return self._accepting is not None and not self._accepting.done()

    def get_loop(self) -> asyncio.AbstractEventLoop:
        assert self._loop is not None
        return self._loop

    async def start_serving(self) -> None:  # serving starts with start()
        return None

    def close(self) -> None:
        if self._accepting is not None:
            self._accepting.cancel()
        for task in list(self._pending):
            task.cancel()
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    async def wait_closed(self) -> None:
        tasks = [t for t in (self._accepting, *self._pending) if t is not None]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    # -- accepting -------------------------------------------------------------------------

    async def _accept_forever(self, sock: socket.socket) -> None:
        loop = self.get_loop()
        while True:
            try:
                conn, _ = await loop.sock_accept(sock)
            except OSError as exc:  # out of descriptors, say: keep the port serving
                logger.warning("accepting a data-plane connection failed: %s", exc)
                await asyncio.sleep(0.1)
                continue
            conn.setblocking(False)
            task = loop.create_task(self._sniff(conn))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)

    async def _sniff(self, conn: socket.socket) -> None:
        loop = self.get_loop()
        try:
            async with asyncio.timeout(self._timeout_s):
                await _readable(loop, conn)
            first = conn.recv(1, socket.MSG_PEEK)
            if not first:
                conn.close()
                return
            if first[0] != TLS_HANDSHAKE_RECORD:
                logger.info("plaintext connection refused on the TLS data plane")
                async with asyncio.timeout(self._timeout_s):
                    await loop.sock_sendall(conn, plaintext_refusal())
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_WR)
                conn.close()
                return
            await loop.connect_accepted_socket(
                self._factory,
                conn,
                ssl=self._context,
                ssl_handshake_timeout=self._timeout_s,
            )
        except (OSError, TimeoutError, ssl.SSLError) as exc:
            logger.debug("a data-plane connection failed before its handshake: %s", exc)
            conn.close()
        except asyncio.CancelledError:
            conn.close()
            raise


_POLL_S = 0.005


async def _readable(loop: asyncio.AbstractEventLoop, conn: socket.socket) -> None:
    ready: asyncio.Future[Any] = loop.create_future()
    fd = conn.fileno()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    try:
        loop.add_reader(fd, wake)
    except NotImplementedError:
        # Windows' proactor loop has no readiness callbacks: ask select, briefly, instead
        # (the caller's timeout bounds the wait).
        while not select.select([conn], [], [], 0)[0]:
            await asyncio.sleep(_POLL_S)
        return
    try:
        await ready
    finally:
        loop.remove_reader(fd)
