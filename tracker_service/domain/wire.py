"""The node↔tracker wire format, implemented here independently of `core`.

The tracker re-implements what it verifies (canonical JSON, node ids, the signed
request string) instead of importing the node's code: a gate that shares code
with what it admits is not an independent check. Both sides are pinned by the
committed vectors in ``tests/data/signed_request_vectors.json``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from typing import Any

from tracker_service.errors import WireFormatError

NODE_ID_HEX_CHARS = 32
PUBLIC_KEY_BYTES = 32
SIGNATURE_BYTES = 64
MIN_NONCE_BYTES = 16

HEADER_NODE = "X-Meshnet-Node"
HEADER_TIMESTAMP = "X-Meshnet-Timestamp"
HEADER_NONCE = "X-Meshnet-Nonce"
HEADER_SIGNATURE = "X-Meshnet-Signature"
HEADER_JOIN_TOKEN = "X-Meshnet-Join-Token"
SIGNED_HEADERS = (HEADER_NODE, HEADER_TIMESTAMP, HEADER_NONCE, HEADER_SIGNATURE)

# One compiled match instead of a per-character loop: these run on every signed request.
_LOWER_HEX = re.compile(r"[0-9a-f]*")


def canonical_json(value: Any) -> bytes:
    """The one byte form both sides sign and hash (sorted keys, no spaces, UTF-8)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def node_id_for(public_key: bytes) -> str:
    """First 32 hex chars of SHA-256 over the raw 32-byte Ed25519 public key."""
    return hashlib.sha256(public_key).hexdigest()[:NODE_ID_HEX_CHARS]


def b64encode(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def b64decode_exact(text: str, length: int, what: str) -> bytes:
    """Decode standard padded base64 and insist on exactly `length` bytes."""
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError) as exc:
        raise WireFormatError(f"{what} is not standard base64") from exc
    if len(raw) != length:
        raise WireFormatError(f"{what} decodes to {len(raw)} bytes; expected {length}")
    return raw


def parse_nonce(text: str) -> str:
    """Nonces are >= 16 random bytes written as lowercase hex."""
    if len(text) < 2 * MIN_NONCE_BYTES or len(text) % 2 or len(text) > 256:
        raise WireFormatError(
            f"nonce has {len(text)} hex chars; expected an even count from "
            f"{2 * MIN_NONCE_BYTES} to 256"
        )
    if not _LOWER_HEX.fullmatch(text):
        raise WireFormatError("nonce must be lowercase hex")
    return text


def is_node_id(text: str) -> bool:
    """A node id as the wire writes it: exactly 32 lowercase hex chars."""
    return len(text) == NODE_ID_HEX_CHARS and _LOWER_HEX.fullmatch(text) is not None


def parse_timestamp(text: str) -> int:
    if not text.isdigit() or len(text) > 12:
        raise WireFormatError("timestamp must be unix seconds as an integer string")
    return int(text)


def signed_request_message(
    method: str, path: str, timestamp: int | str, nonce: str, body: bytes
) -> bytes:
    """UTF-8 of METHOD\\nPATH\\nTIMESTAMP\\nNONCE\\nsha256_hex(body) — what a node signs."""
    digest = hashlib.sha256(body).hexdigest()
    return f"{method.upper()}\n{path}\n{timestamp}\n{nonce}\n{digest}".encode()


def domain_message(domain: bytes, payload: Any) -> bytes:
    """`domain` + newline + canonical JSON, e.g. b"meshnet.route-ticket.v1\\n{...}".

    The domain may be given with or without its trailing newline; the message
    always carries exactly one, as the wire contract writes it.
    """
    return domain.rstrip(b"\n") + b"\n" + canonical_json(payload)
