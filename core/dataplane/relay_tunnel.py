"""A relayed client's TLS, carried to this node's own TLS listener: the relay sees ciphertext.

A client of a relayed node opens the stream ``/v1/tunnel`` through the relay and
sends the raw bytes of a TLS connection as binary messages. The node pipes them
into a loopback connection to its own data-plane port, so the TLS handshake
ends at the node's certificate (the one whose pin the tracker publishes) and
the session inside runs through exactly the server a direct client reaches.
The relay forwards records it cannot read or alter unseen
(docs/wire.md#relay).

A node with TLS refuses a plain relayed ``/v1/session`` for the same reason its
port refuses a plaintext connection: a prompt must never cross a relay in clear.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from websockets.exceptions import ConnectionClosed

from core.dataplane.relay_stream import RelayedConnection

logger = logging.getLogger(__name__)

TUNNEL_PATH = "/v1/tunnel"
CHUNK_BYTES = 64 * 1024
CLOSE_POLICY = 1008
CLOSE_INTERNAL = 1011
# Close reasons fit the 123 bytes a close frame allows.
TLS_REQUIRED_REASON = "tls-required: this node is relayed with TLS inside; open /v1/tunnel"
PLAINTEXT_NODE_REASON = "this node serves plaintext; open /v1/session"

OpenLocal = Callable[[], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]


async def pipe(stream: RelayedConnection, open_local: OpenLocal) -> None:
    """Carry ``stream``'s bytes to and from the node's own TLS listener until either ends."""
    try:
        reader, writer = await open_local()
    except OSError as exc:
        logger.warning("a relayed TLS tunnel cannot reach the node's own listener: %s", exc)
        await stream.close(CLOSE_INTERNAL, "the node's TLS listener is not reachable")
        return

    async def to_listener() -> None:
        try:
            async for message in stream:
                if isinstance(message, str):
                    return  # a tunnel carries TLS records only
                writer.write(message)
                await writer.drain()
        except (ConnectionClosed, OSError):
            return

    async def to_client() -> None:
        try:
            while chunk := await reader.read(CHUNK_BYTES):
                await stream.send(chunk)
        except (ConnectionClosed, OSError):
            return

    tasks = {asyncio.ensure_future(to_listener()), asyncio.ensure_future(to_client())}
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        writer.close()
        with contextlib.suppress(OSError, ConnectionError):
            await writer.wait_closed()
