"""The tracker's own Ed25519 key: it signs session credentials and route tickets.

Kept as a base64 seed in the tracker's data folder with mode 0600, or given by
setting (``MESHNET_TRACKER_SIGNING_KEY``) so several replicas share one key.
"""

from __future__ import annotations

import logging
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from tracker_service.domain.wire import (
    PUBLIC_KEY_BYTES,
    SIGNATURE_BYTES,
    b64decode_exact,
    b64encode,
    domain_message,
    node_id_for,
)
from tracker_service.errors import KeyFileError, KeyFileExposed, WireFormatError

log = logging.getLogger(__name__)

# Domains of what the tracker signs. Part of the wire contract.
NODE_SESSION_DOMAIN = b"meshnet.node-session.v1"
ROUTE_TICKET_DOMAIN = b"meshnet.route-ticket.v1"
NETWORK_INFO_DOMAIN = b"meshnet.network-info.v1"
INVITE_REDEEMED_DOMAIN = b"meshnet.invite-redeemed.v1"

_SEED_BYTES = 32


class TrackerKey:
    """An Ed25519 private key with the signing helper routes and tickets use."""

    def __init__(self, private_key: Ed25519PrivateKey) -> None:
        self._private = private_key
        self._public_raw = private_key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )

    @classmethod
    def from_seed(cls, seed: bytes) -> TrackerKey:
        return cls(Ed25519PrivateKey.from_private_bytes(seed))

    @classmethod
    def from_seed_b64(cls, text: str) -> TrackerKey:
        try:
            seed = b64decode_exact(text.strip(), _SEED_BYTES, "tracker signing key")
        except WireFormatError as exc:
            raise KeyFileError(f"{exc}; give the base64 of a 32-byte Ed25519 seed") from exc
        return cls.from_seed(seed)

    @classmethod
    def load_or_create(cls, path: Path) -> TrackerKey:
        """Read the key at `path`, creating it (0600) on first start."""
        if path.exists():
            mode = stat.S_IMODE(path.stat().st_mode)
            if mode & 0o077:
                raise KeyFileExposed(
                    f"the tracker key {path} is readable by other users (mode {mode:o}); run "
                    f"`chmod 600 {path}` (and replace the key if others may have read it)"
                )
            return cls.from_seed_b64(path.read_text(encoding="ascii"))
        path.parent.mkdir(parents=True, exist_ok=True)
        key = cls(Ed25519PrivateKey.generate())
        seed = key._private.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )
        # Written whole to a private temporary file, then linked into place: a start
        # killed mid-write leaves no empty key file that every later start refuses, and
        # link() fails like O_EXCL when a replica starting at once got there first.
        fd, temporary = tempfile.mkstemp(prefix=".tracker-key-", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="ascii") as handle:  # mkstemp makes it 0600
                handle.write(b64encode(seed) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            try:
                os.link(temporary, path)
            except FileExistsError:
                return cls.from_seed_b64(path.read_text(encoding="ascii"))
        finally:
            os.unlink(temporary)
        log.info("created tracker key %s", path)
        return key

    @property
    def public_key_raw(self) -> bytes:
        return self._public_raw

    @property
    def public_key_b64(self) -> str:
        return b64encode(self._public_raw)

    @property
    def fingerprint(self) -> str:
        """What an invite link's ``key`` names (docs/wire.md#invites)."""
        return key_fingerprint(self._public_raw)

    def sign(self, domain: bytes, payload: Any) -> str:
        """Base64 Ed25519 signature over ``domain + b"\\n" + canonical_json(payload)``."""
        return b64encode(self._private.sign(domain_message(domain, payload)))


def key_fingerprint(public_raw: bytes) -> str:
    """First 32 hex chars of SHA-256 over the raw 32-byte Ed25519 public key (the same
    construction as a node id)."""
    return node_id_for(public_raw)


def ed25519_public_key(raw: bytes) -> Ed25519PublicKey | None:
    """The parsed key, to verify many signatures with; None unless 32 bytes of a valid key."""
    if len(raw) != PUBLIC_KEY_BYTES:
        return None
    try:
        return Ed25519PublicKey.from_public_bytes(raw)
    except ValueError:
        return None


def verify_ed25519(
    public_key: bytes | Ed25519PublicKey, signature_b64: str, message: bytes
) -> bool:
    """True when `signature_b64` is a valid signature of `message` by `public_key`."""
    if isinstance(public_key, bytes):
        parsed = ed25519_public_key(public_key)
        if parsed is None:
            return False
        public_key = parsed
    try:
        signature = b64decode_exact(signature_b64, SIGNATURE_BYTES, "signature")
        public_key.verify(signature, message)
    except (WireFormatError, InvalidSignature, ValueError):
        return False
    return True


def verify_domain_signature(
    public_key: bytes, signature_b64: str, domain: bytes, payload: Any
) -> bool:
    """Check a signature made by :meth:`TrackerKey.sign` (or a node, same scheme)."""
    return verify_ed25519(public_key, signature_b64, domain_message(domain, payload))
