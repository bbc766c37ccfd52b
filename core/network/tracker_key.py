"""The tracker key fingerprint an invite link names (docs/wire.md#invites).

The first 32 hex chars of SHA-256 over the raw 32-byte Ed25519 public key: the same
construction as a node id, so an operator can read both the same way.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re

FINGERPRINT_RE = re.compile(r"^[0-9a-f]{32}$")
PUBLIC_KEY_BYTES = 32


def key_fingerprint(public_raw: bytes) -> str:
    return hashlib.sha256(public_raw).hexdigest()[:32]


def key_fingerprint_b64(public_key_b64: str) -> str | None:
    """The fingerprint of a base64 key, or None when it is no 32-byte key."""
    try:
        raw = base64.b64decode(public_key_b64, validate=True)
    except (binascii.Error, ValueError):
        return None
    return key_fingerprint(raw) if len(raw) == PUBLIC_KEY_BYTES else None
