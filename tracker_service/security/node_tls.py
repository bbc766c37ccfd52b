"""Dialling a node's TLS data plane: no CA, the registered pin instead.

The context checks neither a CA nor a host name (a node's certificate is
self-signed); :class:`PinnedConnect` checks the peer certificate's key against the
pin right after the TLS handshake and before the WebSocket upgrade is sent, so
nothing at all reaches a peer holding another key. A mismatch is a
``tls-pin-mismatch`` refusal and is never retried in clear.
"""

from __future__ import annotations

import ssl
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

from tracker_service.domain.tls_pin import spki_pin_of_der
from tracker_service.errors import PinMismatch


def node_client_context() -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the pin, checked after the handshake, replaces it
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


_CONTEXT = node_client_context()


def node_http_client() -> httpx.AsyncClient:
    """The tracker's HTTP client for nodes' GETs: no CA (nodes are self-signed). The
    challenge checks the pin on the answer (reachability.py); the files fetched are
    checked against their SHA-256 (node_files.py), so a wrong peer learns only a path."""
    return httpx.AsyncClient(follow_redirects=False, trust_env=False, verify=_CONTEXT)


def check_response_pin(response: httpx.Response, expected: str) -> None:
    """The pin check on an HTTPS answer, before its body is read or trusted."""
    stream = response.extensions.get("network_stream")
    check_peer_pin(None if stream is None else stream.get_extra_info("ssl_object"), expected)


def check_peer_pin(ssl_object: Any, expected: str) -> None:
    """Raise :class:`PinMismatch` unless the peer's certificate carries the pinned key."""
    der = None if ssl_object is None else ssl_object.getpeercert(binary_form=True)
    got = spki_pin_of_der(der) if der else ""
    if not expected or got != expected:
        raise PinMismatch(
            f"the node's TLS certificate key hashes to {got[:16] or 'nothing'}…, not the pin "
            f"{expected[:16] or '(none)'}… it registered; nothing was sent"
        )


class PinnedConnect(connect):
    """``websockets.connect`` to a ``wss://`` node whose certificate must match ``pin``."""

    def __init__(self, uri: str, *, pin: str, **kwargs: Any) -> None:
        kwargs.setdefault("ssl", _CONTEXT)
        super().__init__(uri, **kwargs)
        self._pin = pin

    async def open_tcp_connection(self) -> ClientConnection:
        connection = await super().open_tcp_connection()
        try:
            check_peer_pin(connection.transport.get_extra_info("ssl_object"), self._pin)
        except PinMismatch:
            connection.transport.abort()
            raise
        return connection
