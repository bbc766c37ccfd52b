"""Dialling a node's ``wss://`` data plane from the node side of the code: the pin
replaces a CA (core/dataplane/tls.py). The tracker has its own independent client
(tracker_service/security/node_tls.py); this one serves core's callers, the tests and
the benchmarks."""

from __future__ import annotations

from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from core.dataplane.tls import check_pin, pinned_client_context
from core.errors import PinMismatch


class PinnedConnect(connect):
    """``websockets.connect`` whose TLS peer must present the key ``pin`` names; checked
    after the TLS handshake, before the WebSocket upgrade is sent."""

    def __init__(self, uri: str, *, pin: str, **kwargs: Any) -> None:
        kwargs.setdefault("ssl", pinned_client_context())
        super().__init__(uri, **kwargs)
        self._pin = pin

    async def open_tcp_connection(self) -> ClientConnection:
        connection = await super().open_tcp_connection()
        try:
            check_pin(connection.transport.get_extra_info("ssl_object"), self._pin)
        except PinMismatch:
            connection.transport.abort()
            raise
        return connection
