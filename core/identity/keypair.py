"""A node's Ed25519 identity: the key pair, the node id derived from it, signatures.

The node id is not chosen, it is derived: the first 32 hex characters of the
SHA-256 of the raw 32-byte public key. The tracker re-derives it from the public
key a node registers with, so a node cannot claim another node's id without its
private key. Where the key pair is stored lives in :mod:`core.identity.keystore`.

Wire forms (see docs/wire.md#conventions): public keys and signatures travel as standard,
padded base64 of their raw bytes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from core.errors import IdentityError

NODE_ID_HEX_CHARS = 32
SEED_BYTES = 32
PUBLIC_KEY_BYTES = 32
SIGNATURE_BYTES = 64


def node_id_for(public_key_raw: bytes) -> str:
    """The node id a raw 32-byte Ed25519 public key stands for."""
    if len(public_key_raw) != PUBLIC_KEY_BYTES:
        raise IdentityError(
            f"an Ed25519 public key is {PUBLIC_KEY_BYTES} bytes, got {len(public_key_raw)}",
            reason="bad-public-key",
        )
    return hashlib.sha256(public_key_raw).hexdigest()[:NODE_ID_HEX_CHARS]


def b64encode(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def b64decode(text: str) -> bytes:
    """Strict standard base64 (padded); malformed input raises ``binascii.Error``."""
    return base64.b64decode(text.encode("ascii"), validate=True)


@dataclass(frozen=True)
class NodeIdentity:
    """One node's key pair. Ed25519 signatures are deterministic, so a fixed seed
    gives fixed signatures — which is what lets the committed vectors exist."""

    private_key: Ed25519PrivateKey = field(repr=False)

    @classmethod
    def generate(cls) -> NodeIdentity:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_seed(cls, seed: bytes) -> NodeIdentity:
        if len(seed) != SEED_BYTES:
            raise IdentityError(
                f"an Ed25519 private key seed is {SEED_BYTES} bytes, got {len(seed)}",
                reason="bad-private-key",
            )
        return cls(Ed25519PrivateKey.from_private_bytes(seed))

    @property
    def seed(self) -> bytes:
        """The raw 32-byte private key; only the key store should need it."""
        return self.private_key.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )

    @property
    def public_key_raw(self) -> bytes:
        return self.private_key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )

    @property
    def public_key_b64(self) -> str:
        return b64encode(self.public_key_raw)

    @property
    def node_id(self) -> str:
        return node_id_for(self.public_key_raw)

    def sign(self, message: bytes) -> bytes:
        """The 64-byte Ed25519 signature of ``message``."""
        return self.private_key.sign(message)

    def sign_b64(self, message: bytes) -> str:
        return b64encode(self.sign(message))


def public_key_from_b64(public_key_b64: str) -> Ed25519PublicKey:
    """Parse a wire public key; a malformed one raises IdentityError."""
    try:
        raw = b64decode(public_key_b64)
    except (binascii.Error, ValueError, UnicodeEncodeError) as exc:
        raise IdentityError("the public key is not valid base64", reason="bad-public-key") from exc
    if len(raw) != PUBLIC_KEY_BYTES:
        raise IdentityError(
            f"an Ed25519 public key is {PUBLIC_KEY_BYTES} bytes, got {len(raw)}",
            reason="bad-public-key",
        )
    return Ed25519PublicKey.from_public_bytes(raw)


def verify(
    public_key: Ed25519PublicKey | bytes | str, message: bytes, signature: bytes | str
) -> bool:
    """True only if ``signature`` is a valid Ed25519 signature of ``message``.

    Accepts the public key as an object, raw bytes or wire base64, and the
    signature as raw bytes or wire base64. Anything malformed is simply invalid:
    a verifier must never crash on what a peer sent it.
    """
    try:
        if isinstance(public_key, str):
            key = public_key_from_b64(public_key)
        elif isinstance(public_key, bytes):
            key = Ed25519PublicKey.from_public_bytes(public_key)
        else:
            key = public_key
        raw_signature = b64decode(signature) if isinstance(signature, str) else signature
    except (IdentityError, binascii.Error, ValueError, UnicodeEncodeError):
        return False
    if len(raw_signature) != SIGNATURE_BYTES:
        return False
    try:
        key.verify(raw_signature, message)
    except InvalidSignature:
        return False
    return True
