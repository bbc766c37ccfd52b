"""A small route-hop client: one WebSocket to one node for one session.

Used by the tests and the benchmarks only, so it lives here, not in core/. The
tracker has its own independent client; this one exists so a test can drive a hop without
re-deriving the wire protocol, and turns every refusal into a ProtocolError
whose ``reason`` is the node's reason code.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import torch
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from core.dataplane import frames, wire
from core.dataplane.tls_client import PinnedConnect
from core.errors import ProtocolError

DEFAULT_MAX_REPLY_BYTES = 256 * 1024 * 1024


class HopClient:
    """``open`` -> ``step``* -> ``close`` against one node's ``/v1/session``."""

    def __init__(
        self,
        url: str,
        *,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        open_timeout_s: float = 30.0,
        tls_pin: str | None = None,
    ) -> None:
        """``tls_pin``: a ``wss://`` node's pin (route plans carry it); required there."""
        self._tls_pin = tls_pin
        self.url = url if url.endswith(wire.SESSION_PATH) else url.rstrip("/") + wire.SESSION_PATH
        self._max_reply_bytes = max_reply_bytes
        self._open_timeout_s = open_timeout_s
        self._ws: ClientConnection | None = None
        self.opened: dict[str, Any] | None = None

    async def __aenter__(self) -> HopClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.abort()

    async def open(
        self,
        signed_ticket: Mapping[str, Any] | None,
        max_length: int,
        sampling: Mapping[str, Any] | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """Send the ticket (and any further ``fields`` of the open message, such as
        ``step_receipts``); returns the node's ``opened`` message."""
        options: dict[str, Any] = {
            "max_size": self._max_reply_bytes,
            "compression": None,
            "open_timeout": self._open_timeout_s,
        }
        if self.url.startswith("wss://"):
            self._ws = await PinnedConnect(self.url, pin=self._tls_pin or "", **options)
        else:
            self._ws = await connect(self.url, **options)
        message: dict[str, Any] = {"type": "open", "max_length": max_length}
        if signed_ticket is not None:
            message["ticket"] = dict(signed_ticket)
        if sampling is not None:
            message["sampling"] = dict(sampling)
        message.update(fields)
        await self.send_text(json.dumps(message))
        reply = await self._expect_text("opened")
        self.opened = reply
        return reply

    async def step(self, tensors: Mapping[str, torch.Tensor], position: int) -> frames.Frame:
        """One step: tensors plus the position metadata the node checks."""
        data = frames.encode_frame(tensors, {frames.POSITION_KEY: str(position)})
        return await self.step_bytes(data)

    async def step_bytes(self, data: bytes) -> frames.Frame:
        """Send a raw binary frame; the reply decoded."""
        return frames.decode_frame(await self.step_raw(data), self._max_reply_bytes)

    async def step_raw(self, data: bytes) -> bytes:
        """Send a raw binary frame; the reply's bytes as they came (size-checked only),
        so a client can pass hidden states on to the next hop without decoding them."""
        ws = self._connection()
        try:
            await ws.send(data)
            reply = await ws.recv()
        except ConnectionClosed as exc:
            raise _closed(exc) from exc
        if isinstance(reply, str):
            raise _as_error(reply, "a step reply")
        frames.check_size(reply, self._max_reply_bytes)
        return reply

    async def close(self) -> dict[str, Any]:
        """End the session; returns ``{"receipt", "signature"}`` signed by the node."""
        await self.send_text(json.dumps({"type": "close"}))
        reply = await self._expect_text("receipt")
        await self.abort()
        return {"receipt": reply.get("receipt"), "signature": reply.get("signature")}

    async def send_text(self, text: str) -> None:
        try:
            await self._connection().send(text)
        except ConnectionClosed as exc:
            raise _closed(exc) from exc

    async def abort(self) -> None:
        """Drop the connection (the node frees the session)."""
        if self._ws is not None:
            ws, self._ws = self._ws, None
            await ws.close()

    def _connection(self) -> ClientConnection:
        if self._ws is None:
            raise ProtocolError("the hop is not open; call open() first", reason="not-open")
        return self._ws

    async def _expect_text(self, kind: str) -> dict[str, Any]:
        try:
            reply = await self._connection().recv()
        except ConnectionClosed as exc:
            raise _closed(exc) from exc
        if not isinstance(reply, str):
            raise ProtocolError(f"expected the node's {kind!r} message, got binary")
        parsed = _parse(reply)
        if parsed.get("type") != kind:
            raise _as_error(reply, f"the {kind!r} message")
        return parsed


def _parse(text: str) -> dict[str, Any]:
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProtocolError("the node sent a text message that is not JSON") from exc
    if not isinstance(parsed, dict):
        raise ProtocolError("the node sent a JSON message that is not an object")
    return parsed


def _as_error(text: str, expected: str) -> ProtocolError:
    parsed = _parse(text)
    if parsed.get("type") == "error":
        return ProtocolError(
            str(parsed.get("message", "the node refused the session")),
            reason=str(parsed.get("reason", wire.BAD_FRAME)),
        )
    return ProtocolError(f"expected {expected}, the node sent {parsed.get('type')!r}")


def _closed(exc: ConnectionClosed) -> ProtocolError:
    received = exc.rcvd
    if received is not None and received.code == wire.CLOSE_MESSAGE_TOO_BIG:
        return ProtocolError(
            "the node dropped the connection: the frame was over its size limit",
            reason=wire.FRAME_TOO_LARGE,
        )
    if received is not None and received.code == 1008 and received.reason:
        return ProtocolError("the node ended the session", reason=received.reason)
    return ProtocolError("the node closed the connection", reason="connection-closed")
