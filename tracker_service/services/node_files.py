"""Files a node serves over plain HTTP beside its data plane, fetched under the endpoint policy.

``/v1/tokenizer`` (``tokenizer.json``), ``/v1/config`` (``config.json``) and
``/v1/tokenizer_config`` (the chat template). The tracker trusts none of them
as served: callers check the bytes against a pin (the recipe's tokenizer
revision, the identity's architecture digest, the ledger's chat template
digest) or against what independent nodes agree on.

Every fetch obeys :mod:`tracker_service.security.endpoint_policy` like the
reachability dial and the route sessions do: the node's host is resolved
once, every address must be public unless the operator allowed private
ones, and the request goes to that literal address (the registered name
travels in ``Host`` and, for TLS, as SNI), so neither a registered endpoint
nor a rebinding resolver can aim these GETs at the tracker's own network.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import httpx

from tracker_service.security.endpoint_policy import resolve_endpoint

log = logging.getLogger(__name__)

TOKENIZER_PATH = "/v1/tokenizer"
CONFIG_PATH = "/v1/config"
TOKENIZER_CONFIG_PATH = "/v1/tokenizer_config"
MAX_METADATA_BYTES = 4 * 1024 * 1024


@asynccontextmanager
async def stream_from_node(
    client: httpx.AsyncClient,
    endpoint: str,
    path: str,
    *,
    allow_private: bool,
    timeout_s: float,
) -> AsyncIterator[httpx.Response]:
    """``GET path`` from the node at its pinned address; raises EndpointRefused first."""
    pinned = await asyncio.to_thread(resolve_endpoint, endpoint, allow_private=allow_private)
    extensions: dict[str, Any] = {"sni_hostname": pinned.host} if pinned.scheme == "wss" else {}
    async with client.stream(
        "GET",
        pinned.http_url(path),  # a relayed node's files live under /relay/<node_id>
        headers={"Host": pinned.host_header},
        extensions=extensions,
        timeout=timeout_s,
    ) as reply:
        yield reply


async def fetch_metadata(
    client: httpx.AsyncClient,
    endpoint: str,
    path: str,
    *,
    allow_private: bool = False,
    timeout_s: float = 5.0,
    max_bytes: int = MAX_METADATA_BYTES,
) -> bytes | None:
    """The file's bytes, or None when the node has none, fails, is refused or sends too much."""
    try:
        async with stream_from_node(
            client, endpoint, path, allow_private=allow_private, timeout_s=timeout_s
        ) as reply:
            if reply.status_code != 200:
                return None
            body = bytearray()
            async for chunk in reply.aiter_bytes():
                body += chunk
                if len(body) > max_bytes:
                    log.info("%s from %s is over %d bytes; ignored", path, endpoint, max_bytes)
                    return None
            return bytes(body)
    except Exception as exc:  # any node may be broken (or refused); the caller asks the next
        log.info("fetching %s from %s failed: %s", path, endpoint, exc)
        return None


def agreed_digest(bodies: Sequence[bytes | None]) -> str | None:
    """The SHA-256 of the bytes every node served, when all served the same bytes."""
    if not bodies or any(b is None for b in bodies):
        return None
    digests = {hashlib.sha256(b).hexdigest() for b in bodies if b is not None}
    return digests.pop() if len(digests) == 1 else None
