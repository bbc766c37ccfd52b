"""The TLS data plane on an event loop without ``add_reader``, as Windows' proactor
loop is: its first-byte peek must still work, or no connection reaches a Windows
node (under Wine every one failed with NotImplementedError before the fallback)."""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import Callable
from typing import Any

from core.dataplane.tls import generate_certificate, pinned_client_context, server_context
from core.dataplane.tls_listener import TLS_REQUIRED, TlsListener


class NoReaderLoop(asyncio.SelectorEventLoop):
    """What the proactor loop says when asked for readiness callbacks."""

    def add_reader(self, fd: Any, callback: Callable[..., object], *args: Any) -> None:  # type: ignore[override]
        raise NotImplementedError


class Echo(asyncio.Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        assert isinstance(self.transport, asyncio.WriteTransport)
        self.transport.write(data)


async def _exchange() -> tuple[bytes, bytes]:
    certificate = generate_certificate("a" * 32)
    listener = TlsListener(
        "127.0.0.1", 0, server_context(certificate), Echo, handshake_timeout_s=5.0
    )
    await listener.start()
    port = listener.sockets[0].getsockname()[1]
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.1\r\n\r\n")
        refused = await asyncio.wait_for(reader.read(), 5)
        writer.close()
        context: ssl.SSLContext = pinned_client_context()
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context)
        writer.write(b"ping")
        echoed = await asyncio.wait_for(reader.readexactly(4), 5)
        writer.close()
        return refused, echoed
    finally:
        listener.close()
        await listener.wait_closed()


def test_plaintext_is_refused_and_tls_served_without_add_reader() -> None:
    loop = NoReaderLoop()
    try:
        refused, echoed = loop.run_until_complete(_exchange())
    finally:
        loop.close()
    assert refused.startswith(b"HTTP/1.1 400")
    assert json.loads(refused.split(b"\r\n\r\n", 1)[1])["reason"] == TLS_REQUIRED
    assert echoed == b"ping"
