"""One client connection that reached this node through its relay link.

:class:`RelayedConnection` offers what the shard server's session handler
uses of a websockets ``ServerConnection`` (``recv``, iteration, ``send``,
``close``, ``protocol.max_message_size``, ``remote_address``), so a relayed
session runs through exactly the same ``HopSession`` as a direct one: the
ticket is verified here, frames are size- and shape-checked here and the
receipt is signed here. The relay only moves the bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from websockets.exceptions import ConnectionClosed, ConnectionClosedError, ConnectionClosedOK
from websockets.frames import Close

from core.dataplane import relay_mux

CLOSE_MESSAGE_TOO_BIG = 1009
CLOSE_GOING_AWAY = 1001

SendFrame = Callable[[bytes], Awaitable[None]]


@dataclass
class StreamLimits:
    """Stands in for websockets' protocol object: the session handler raises the
    message size cap here once a ticket is verified."""

    max_message_size: int | None


class RelayedConnection:
    def __init__(
        self, stream_id: int, client: str, send_frame: SendFrame, max_message_size: int | None
    ) -> None:
        self.stream_id = stream_id
        self.remote_address = (f"relay:{client}", 0)
        self.protocol = StreamLimits(max_message_size)
        self._send_frame = send_frame
        self._inbox: asyncio.Queue[str | bytes | None] = asyncio.Queue()
        self._received: Close | None = None  # the client's close, relayed
        self._sent: Close | None = None

    @property
    def closed(self) -> bool:
        return self._received is not None or self._sent is not None

    # -- from the link ---------------------------------------------------------------------

    def feed(self, kind: int, payload: bytes) -> bool:
        """A client message; False when it broke the size cap (the caller closes)."""
        if self.closed:
            return True
        limit = self.protocol.max_message_size
        if limit is not None and len(payload) > limit:
            return False
        if kind == relay_mux.TEXT:
            try:
                self._inbox.put_nowait(payload.decode("utf-8"))
            except UnicodeDecodeError:
                return False
        else:
            self._inbox.put_nowait(payload)
        return True

    def peer_closed(self, code: int, reason: str) -> None:
        if self._received is None:
            self._received = Close(code, reason)
            self._inbox.put_nowait(None)

    # -- what HopSession calls -------------------------------------------------------------

    async def recv(self) -> str | bytes:
        if self._inbox.empty() and self.closed:
            raise self._closed_error()
        item = await self._inbox.get()
        if item is None:
            self._inbox.put_nowait(None)  # every later recv sees the close too
            raise self._closed_error()
        return item

    async def __aiter__(self) -> AsyncIterator[str | bytes]:
        while True:
            try:
                yield await self.recv()
            except ConnectionClosedOK:
                return

    async def send(self, message: str | bytes) -> None:
        if self.closed:
            raise self._closed_error()
        if isinstance(message, str):
            frame = relay_mux.encode(relay_mux.TEXT, self.stream_id, message.encode("utf-8"))
        else:
            frame = relay_mux.encode(relay_mux.BINARY, self.stream_id, bytes(message))
        try:
            await self._send_frame(frame)
        except ConnectionClosed:
            self.peer_closed(CLOSE_GOING_AWAY, "the relay link closed")
            raise self._closed_error() from None

    async def close(self, code: int = 1000, reason: str = "") -> None:
        if self._sent is not None:
            return
        self._sent = Close(code, reason)
        self._inbox.put_nowait(None)
        if self._received is None:
            payload = relay_mux.close_payload(code, reason)
            # A link already gone means the relay closed the client itself.
            with contextlib.suppress(ConnectionClosed):
                await self._send_frame(relay_mux.encode(relay_mux.CLOSE, self.stream_id, payload))

    def _closed_error(self) -> ConnectionClosed:
        codes = {c.code for c in (self._received, self._sent) if c is not None}
        if codes <= {1000, 1001}:
            return ConnectionClosedOK(self._received, self._sent)
        return ConnectionClosedError(self._received, self._sent)
