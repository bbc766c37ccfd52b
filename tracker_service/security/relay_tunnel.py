"""A pinned TLS session to a relayed node, carried through its relay as ciphertext.

The relay forwards one WebSocket stream per client (``<relay>/<node_id>/<path>``).
For ``/v1/tunnel`` the node pipes that stream's bytes into its own TLS port
(core/dataplane/relay_tunnel.py, the node's side). So the tracker opens the
outer stream to the relay, puts one end of a socket pair behind it, and runs
an ordinary :class:`~tracker_service.security.node_tls.PinnedConnect` over the
other end: the TLS handshake is with the node itself, its certificate is
checked against the node's registered pin before the upgrade is sent, and
the relay only ever carries TLS records (docs/wire.md#relay).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tracker_service.security.node_tls import PinnedConnect

log = logging.getLogger(__name__)

TUNNEL_PATH = "/v1/tunnel"
SESSION_PATH = "/v1/session"
CHUNK_BYTES = 64 * 1024
# Each chunk is one relay message; a TLS record is at most ~16 KiB, so this is ample.
OUTER_MAX_BYTES = 2 * CHUNK_BYTES

_PUMPS: set[asyncio.Task[None]] = set()  # held here so a running pump is never collected


async def connect_through_relay(
    endpoint: str,
    *,
    host: str,
    pin: str,
    relay_options: dict[str, Any],
    session_options: dict[str, Any],
) -> ClientConnection:
    """The node's ``/v1/session`` over TLS pinned to ``pin``, inside a relay stream.

    ``endpoint`` is the relayed endpoint (``<relay url>/<node_id>``); ``host`` the name
    sent as SNI and Host inside; ``relay_options`` go to the outer dial (the pinned
    address of the relay, timeouts), ``session_options`` to the inner one.
    Raises what ``websockets.connect`` raises, and ``PinMismatch``."""
    outer = await connect(
        endpoint.rstrip("/") + TUNNEL_PATH,
        **{**relay_options, "max_size": OUTER_MAX_BYTES, "compression": None},
    )
    inside, outside = socket.socketpair()
    try:
        reader, writer = await asyncio.open_connection(sock=outside)
    except BaseException:
        inside.close()
        outside.close()
        await outer.close()
        raise
    pump = asyncio.ensure_future(_pump(outer, reader, writer))
    _PUMPS.add(pump)
    pump.add_done_callback(_PUMPS.discard)
    literal = f"[{host}]" if ":" in host else host
    try:
        return await PinnedConnect(
            f"wss://{literal}{SESSION_PATH}",
            pin=pin,
            sock=inside,
            server_hostname=host,
            **session_options,
        )
    except BaseException:
        pump.cancel()
        inside.close()
        raise


async def _pump(
    outer: ClientConnection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Bytes both ways until either side ends; then both end."""

    async def to_relay() -> None:
        with contextlib.suppress(ConnectionClosed, OSError):
            while chunk := await reader.read(CHUNK_BYTES):
                await outer.send(chunk)

    async def from_relay() -> None:
        with contextlib.suppress(ConnectionClosed, OSError):
            async for message in outer:
                if isinstance(message, str):
                    log.warning("a relay sent text on a TLS tunnel; closing it")
                    return
                writer.write(message)
                await writer.drain()

    tasks = {asyncio.ensure_future(to_relay()), asyncio.ensure_future(from_relay())}
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        writer.close()
        with contextlib.suppress(Exception):
            await outer.close()
