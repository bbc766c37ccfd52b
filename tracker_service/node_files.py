"""Model metadata files a node serves over plain HTTP beside its data plane.

``/v1/config`` (``config.json``) and ``/v1/tokenizer_config`` (the chat
template). The tracker trusts none of them as served: callers check the
bytes against a pin (the identity's architecture digest, the ledger's chat
template digest) or against what independent nodes agree on.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence

import httpx

from tracker_service.reachability import http_base

log = logging.getLogger(__name__)

CONFIG_PATH = "/v1/config"
TOKENIZER_CONFIG_PATH = "/v1/tokenizer_config"
MAX_METADATA_BYTES = 4 * 1024 * 1024


async def fetch_metadata(
    client: httpx.AsyncClient, endpoint: str, path: str, *, timeout_s: float = 5.0
) -> bytes | None:
    """The file's bytes, or None when the node has none, fails, or sends too much."""
    try:
        async with client.stream("GET", http_base(endpoint) + path, timeout=timeout_s) as reply:
            if reply.status_code != 200:
                return None
            body = bytearray()
            async for chunk in reply.aiter_bytes():
                body += chunk
                if len(body) > MAX_METADATA_BYTES:
                    return None
            return bytes(body)
    except Exception as exc:  # any node may be broken; the caller asks the next
        log.info("fetching %s from %s failed: %s", path, endpoint, exc)
        return None


def agreed_digest(bodies: Sequence[bytes | None]) -> str | None:
    """The SHA-256 of the bytes every node served, when all served the same bytes."""
    if not bodies or any(b is None for b in bodies):
        return None
    digests = {hashlib.sha256(b).hexdigest() for b in bodies if b is not None}
    return digests.pop() if len(digests) == 1 else None
