"""Canonical JSON and the signed forms the node puts on the wire.

Every signed thing is bytes that both sides can rebuild exactly: canonical JSON
(sorted keys, no spaces, UTF-8 without escaping), or the signed-request string
of docs/wire.md#signed-requests. The tracker re-implements these independently; the committed
vectors in ``tests/data/`` pin the two together.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from core.identity.keypair import NodeIdentity, verify

HEADER_NODE = "X-Meshnet-Node"
HEADER_TIMESTAMP = "X-Meshnet-Timestamp"
HEADER_NONCE = "X-Meshnet-Nonce"
HEADER_SIGNATURE = "X-Meshnet-Signature"
NONCE_BYTES = 16

# Domains for node- and tracker-signed JSON documents (docs/wire.md#conventions).
ROUTE_TICKET_DOMAIN = b"meshnet.route-ticket.v1\n"
HOP_RECEIPT_DOMAIN = b"meshnet.hop-receipt.v1\n"
REACHABILITY_DOMAIN = b"meshnet.reachability.v1\n"


def canonical_json(value: Any) -> bytes:
    """The one byte form of a JSON value that is hashed or signed."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


def verify_document(public_key_b64: str, domain: bytes, document: Any, signature: str) -> bool:
    """Check a signature over ``domain + canonical_json(document)`` (the tracker signs its
    network description and invite answers so; core/network/invites.py checks them)."""
    try:
        message = domain + canonical_json(document)
    except (TypeError, ValueError):
        return False
    return verify(public_key_b64, message, signature)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_sha256(value: Any) -> str:
    return sha256_hex(canonical_json(value))


def request_path(path_or_url: str) -> str:
    """The path a request signature covers: no scheme, host or query string."""
    return urlsplit(path_or_url).path or "/"


def signed_request_message(
    method: str, path: str, timestamp: int, nonce: str, body: bytes
) -> bytes:
    """``METHOD\\nPATH\\nTIMESTAMP\\nNONCE\\nsha256_hex(body)`` as UTF-8."""
    text = f"{method.upper()}\n{request_path(path)}\n{timestamp}\n{nonce}\n{sha256_hex(body)}"
    return text.encode("utf-8")


def signed_headers(
    method: str,
    path: str,
    body: bytes | None,
    identity: NodeIdentity,
    now: float | None = None,
    nonce: str | None = None,
) -> dict[str, str]:
    """The four headers that authenticate one request to the tracker.

    ``now`` and ``nonce`` exist for the committed vectors; in production they are
    the clock and 16 fresh random bytes, so no two requests share a nonce.
    """
    timestamp = int(time.time() if now is None else now)
    nonce = secrets.token_hex(NONCE_BYTES) if nonce is None else nonce
    message = signed_request_message(method, path, timestamp, nonce, body or b"")
    return {
        HEADER_NODE: identity.node_id,
        HEADER_TIMESTAMP: str(timestamp),
        HEADER_NONCE: nonce,
        HEADER_SIGNATURE: identity.sign_b64(message),
    }


def verify_signed_request(
    method: str, path: str, body: bytes | None, headers: Mapping[str, str], public_key_b64: str
) -> bool:
    """True if ``headers`` carry a valid signature of this request by that key.

    ``headers`` may be any mapping (a web framework's case-insensitive one works).
    Only the signature is checked here; freshness and replay are the receiver's
    policy (the tracker keeps the nonces it has seen).
    """
    try:
        timestamp = int(headers[HEADER_TIMESTAMP])
        nonce = headers[HEADER_NONCE]
        signature = headers[HEADER_SIGNATURE]
    except (KeyError, ValueError):
        return False
    message = signed_request_message(method, path, timestamp, nonce, body or b"")
    return verify(public_key_b64, message, signature)
