"""Signed-request verification: who sent this, is it fresh, was it seen before.

Checked before the body is validated. Order: headers present and well formed,
timestamp inside the window, node id consistent (path, key), signature valid,
then the nonce is spent: only a request with a valid signature can spend one,
so a forger cannot burn an honest node's nonces.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from starlette.requests import Request

from tracker_service import errors
from tracker_service.domain.keys import ed25519_public_key, verify_ed25519
from tracker_service.domain.wire import (
    HEADER_NODE,
    NODE_ID_HEX_CHARS,
    PUBLIC_KEY_BYTES,
    SIGNED_HEADERS,
    b64decode_exact,
    is_node_id,
    node_id_for,
    parse_nonce,
    parse_timestamp,
    signed_request_message,
)
from tracker_service.errors import WireFormatError
from tracker_service.security.key_lookups import KeyLookups
from tracker_service.store.db import Database
from tracker_service.store.nonces import purge_spent_nonces, spend_nonce


@dataclass(frozen=True)
class SignedRequest:
    node_id: str
    public_key: bytes
    timestamp: int
    nonce: str
    body: bytes


class CachedKey(NamedTuple):
    raw: bytes
    # Parsed once per node, not per request; None when the bytes are no Ed25519 point.
    verifier: Ed25519PublicKey | None


class PublicKeyCache:
    """node id -> public key. Safe to cache: the id is the hash of the key."""

    def __init__(self, capacity: int = 200_000) -> None:
        self._keys: OrderedDict[str, CachedKey] = OrderedDict()
        self._capacity = capacity
        self._lock = threading.Lock()
        self._lookups: KeyLookups | None = None

    def lookups(self, database: Database) -> KeyLookups:
        """Grouped store reads for keys not cached yet (key_lookups.py)."""
        if self._lookups is None or self._lookups.database is not database:
            self._lookups = KeyLookups(database)
        return self._lookups

    def get(self, node_id: str) -> CachedKey | None:
        with self._lock:
            key = self._keys.get(node_id)
            if key is not None:
                self._keys.move_to_end(node_id)
            return key

    def put(self, node_id: str, public_key: bytes) -> CachedKey:
        cached = CachedKey(public_key, ed25519_public_key(public_key))
        with self._lock:
            self._keys[node_id] = cached
            self._keys.move_to_end(node_id)
            while len(self._keys) > self._capacity:
                self._keys.popitem(last=False)
        return cached


class NonceBook:
    """Spends nonces in the store and purges stale ones now and then."""

    # Often, so each purge is small: it runs on the event loop (SQLite) and
    # deletes ~1 s of heartbeats' nonces, not a 30 s pile.
    PURGE_EVERY_S = 1.0

    def __init__(self, database: Database, window_s: int) -> None:
        self._db = database
        self.window_s = window_s
        self._next_purge = 0.0

    def spend(self, node_id: str, nonce: str, timestamp: int) -> bool:
        """Blocking: record the nonce in its own transaction; False on replay."""
        with self._db.engine.begin() as connection:
            fresh = spend_nonce(connection, node_id, nonce, expires_at=self.expiry(timestamp))
        self.maybe_purge()
        return fresh

    def expiry(self, timestamp: int) -> float:
        """Until when a nonce must be remembered: past that its timestamp is stale."""
        return float(timestamp + self.window_s + 1)

    def maybe_purge(self) -> None:
        """Delete stale nonces, at most every PURGE_EVERY_S, so the table stays small."""
        if self.purge_due():
            self.purge()

    def purge_due(self) -> bool:
        """True at most once per PURGE_EVERY_S (the caller then purges): no I/O."""
        now = time.time()
        if now < self._next_purge:
            return False
        self._next_purge = now + self.PURGE_EVERY_S
        return True

    def purge(self) -> None:
        """Blocking: delete the nonces whose timestamps are past the window."""
        with self._db.engine.begin() as connection:
            purge_spent_nonces(connection, now=time.time())


# ASGI header names are lowercase bytes; the signed ones, in the order they are returned.
_SIGNED_RAW = tuple(name.lower().encode("latin-1") for name in SIGNED_HEADERS)


def signed_header_values(raw_headers: Iterable[tuple[bytes, bytes]]) -> tuple[str, str, str, str]:
    """The four signed headers (first of each name) from ASGI headers, or AuthRefused.

    One pass over the raw list: on the heartbeat path this replaces four
    case-insensitive lookups in Starlette's Headers.
    """
    found: dict[bytes, str] = {}
    for name, value in raw_headers:
        if name in _SIGNED_RAW and name not in found:
            found[name] = value.decode("latin-1")
    missing = [
        header
        for header, raw in zip(SIGNED_HEADERS, _SIGNED_RAW, strict=True)
        if not found.get(raw)
    ]
    if missing:
        raise errors.AuthRefused(
            errors.MISSING_HEADERS,
            "the request is not signed: missing " + ", ".join(missing),
        )
    node_id, timestamp, nonce, signature = (found[raw] for raw in _SIGNED_RAW)
    return node_id, timestamp, nonce, signature


def _register_public_key(body: bytes, node_id: str) -> bytes:
    """The key a registration brings in its body; its hash must be the header's node id."""
    try:
        document = json.loads(body)
        key = b64decode_exact(document["public_key"], PUBLIC_KEY_BYTES, "public_key")
    except (ValueError, KeyError, TypeError, AttributeError, WireFormatError) as exc:
        raise errors.AuthRefused(
            errors.BAD_SIGNATURE,
            "a registration must carry 'public_key', the base64 of the raw 32-byte "
            f"Ed25519 key that signed it ({exc})",
        ) from exc
    derived = node_id_for(key)
    if derived != node_id:
        raise errors.AuthRefused(
            errors.NODE_ID_MISMATCH,
            f"the public key hashes to node id {derived}, but the request names {node_id}",
        )
    return key


async def verify_signed_request(
    request: Request,
    *,
    database: Database,
    keys: PublicKeyCache,
    nonces: NonceBook,
    key_from_body: bool = False,
    spend: bool = True,
) -> SignedRequest:
    """Authenticate a node's request, or raise AuthRefused with the contract's reason.

    With ``spend=False`` the caller must spend the nonce itself (in the same
    transaction as its own write, to keep the heartbeat at one commit).
    """
    return await verify_signed(
        method=request.method,
        # The path as received (no query string), what the node signed.
        path=request.scope["path"],
        path_node=request.path_params.get("node_id"),
        raw_headers=request.scope["headers"],
        body=await request.body(),
        database=database,
        keys=keys,
        nonces=nonces,
        key_from_body=key_from_body,
        spend=spend,
    )


async def verify_signed(
    *,
    method: str,
    path: str,
    path_node: str | None,
    raw_headers: Iterable[tuple[bytes, bytes]],
    body: bytes,
    database: Database,
    keys: PublicKeyCache,
    nonces: NonceBook,
    key_from_body: bool = False,
    spend: bool = True,
) -> SignedRequest:
    """:func:`verify_signed_request` over the parts of a request (ASGI headers, read body)."""
    node_id, raw_ts, raw_nonce, signature = signed_header_values(raw_headers)
    try:
        timestamp = parse_timestamp(raw_ts)
        nonce = parse_nonce(raw_nonce)
    except WireFormatError as exc:
        raise errors.AuthRefused(errors.MISSING_HEADERS, f"malformed signed header: {exc}") from exc
    if not is_node_id(node_id):
        raise errors.AuthRefused(
            errors.NODE_ID_MISMATCH,
            f"{HEADER_NODE} must be {NODE_ID_HEX_CHARS} lowercase hex chars",
        )
    skew = time.time() - timestamp
    if abs(skew) > nonces.window_s:
        raise errors.AuthRefused(
            errors.STALE_TIMESTAMP,
            f"the request is timestamped {skew:+.0f}s from the tracker's clock "
            f"(limit ±{nonces.window_s}s); check the node's clock",
        )
    if path_node is not None and path_node != node_id:
        raise errors.AuthRefused(
            errors.NODE_ID_MISMATCH,
            f"the path names node {path_node}, but the request is signed by {node_id}",
        )
    if key_from_body:
        public_key = _register_public_key(body, node_id)
        verifier: Ed25519PublicKey | bytes | None = public_key
    else:
        cached = keys.get(node_id)
        if cached is None:
            raw = await keys.lookups(database).public_key(node_id)
            if raw is None:
                raise errors.AuthRefused(
                    errors.UNKNOWN_NODE, f"node {node_id} is not registered with this tracker"
                )
            cached = keys.put(node_id, raw)
        public_key, verifier = cached
    message = signed_request_message(method, path, raw_ts, nonce, body)
    if verifier is None or not verify_ed25519(verifier, signature, message):
        raise errors.AuthRefused(
            errors.BAD_SIGNATURE,
            "the signature does not verify with the node's key over method, path, "
            "timestamp, nonce and body hash",
        )
    signed = SignedRequest(node_id, public_key, timestamp, nonce, body)
    if spend and not await database.run_quick(nonces.spend, node_id, nonce, timestamp):
        raise nonce_reused(node_id)
    return signed


def nonce_reused(node_id: str) -> errors.AuthRefused:
    return errors.AuthRefused(
        errors.NONCE_REUSED, f"node {node_id} already used this nonce; a replay is refused"
    )
