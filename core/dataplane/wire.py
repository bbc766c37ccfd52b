"""The byte forms of the data plane that both sides rebuild exactly (docs/wire.md#data-plane).

The shard server depends on nothing but the key bytes and a ``sign`` callable
it is handed; the tracker re-implements all of this independently and
``tests/data/dataplane_vectors.json`` pins the two.
"""

from __future__ import annotations

import hashlib
import json

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

# The byte forms have one definition on the node (core.identity.signing, core.identity.keypair);
# the data plane re-exports them under the names its modules use.
from core.identity.keypair import b64decode as b64decode
from core.identity.keypair import b64encode as b64encode
from core.identity.signing import HOP_RECEIPT_DOMAIN as HOP_RECEIPT_DOMAIN
from core.identity.signing import REACHABILITY_DOMAIN as REACHABILITY_DOMAIN
from core.identity.signing import ROUTE_TICKET_DOMAIN as ROUTE_TICKET_DOMAIN
from core.identity.signing import canonical_json as canonical_json

SESSION_PATH = "/v1/session"
CHALLENGE_PATH = "/v1/challenge"
HEALTH_PATH = "/v1/health"
TOKENIZER_PATH = "/v1/tokenizer"
# Model metadata a client checks itself: config.json against the identity's
# architecture digest, tokenizer_config.json (chat template) across nodes.
METADATA_PATHS = {"/v1/config": "config.json", "/v1/tokenizer_config": "tokenizer_config.json"}

PUBLIC_KEY_BYTES = 32
SIGNATURE_BYTES = 64

# Reason codes a node sends in {"type": "error"} (docs/wire.md#data-plane-session-codes),
# plus the two the contract leaves open: an idle session the node expired, and a
# fault of the node itself (never the client's input).
BAD_TICKET = "bad-ticket"
TICKET_EXPIRED = "ticket-expired"
WRONG_NODE = "wrong-node"
WRONG_RANGE = "wrong-range"
WRONG_FINGERPRINT = "wrong-fingerprint"
FRAME_TOO_LARGE = "frame-too-large"
BAD_FRAME = "bad-frame"
BAD_SHAPE = "bad-shape"
POSITION_OUT_OF_RANGE = "position-out-of-range"
NO_CAPACITY = "no-capacity"
SESSION_EXPIRED = "session-expired"
INTERNAL_ERROR = "internal-error"
# An open parameter out of range (max_length, sampling): the client's request, not a frame.
BAD_REQUEST = "bad-request"
# Over the node's cap on connections (per address or in total): retry later.
TOO_MANY_CONNECTIONS = "too-many-connections"
# Chained hops (docs/wire.md#chained-hops): a link the ticket does not allow (a node
# that is not this hop's predecessor, a successor not the ticket's), and a chain
# whose link could not be made or went away.
CHAIN_REFUSED = "chain-refused"
CHAIN_BROKEN = "chain-broken"
# The node is leaving (paused for its owner, stopping, moving): the session ends now,
# before its next step; the client fails over at once (docs/wire.md#data-plane-session-codes).
NODE_LEAVING = "node-leaving"

# What a chained hop's predecessor signs to link to it (not JSON-domain-separated
# elsewhere: its own domain keeps it from passing for any other signed document).
CHAIN_LINK_DOMAIN = b"meshnet.chain-link.v1\n"
# What a chained hop signs for each step it passes on (docs/wire.md#chained-hops).
CHAIN_STEP_DOMAIN = b"meshnet.chain-step.v1\n"

# WebSocket close code the protocol layer uses for a message over max_size.
CLOSE_MESSAGE_TOO_BIG = 1009


def node_id_for(public_key: bytes) -> str:
    """First 32 hex chars of sha256(raw public key): ids are derived, never chosen."""
    return hashlib.sha256(public_key).hexdigest()[:32]


def verify_signature(public_key: bytes, message: bytes, signature_b64: object) -> bool:
    """True only for a valid Ed25519 signature; malformed input is simply invalid,
    because a verifier must never crash on what a peer sent it."""
    if not isinstance(signature_b64, str) or len(public_key) != PUBLIC_KEY_BYTES:
        return False
    try:
        signature = b64decode(signature_b64)
        key = Ed25519PublicKey.from_public_bytes(public_key)
    except ValueError:
        return False
    if len(signature) != SIGNATURE_BYTES:
        return False
    try:
        key.verify(signature, message)
    except InvalidSignature:
        return False
    return True


def error_message(reason: str, message: str) -> str:
    """The text frame that ends one session."""
    return json.dumps({"type": "error", "reason": reason, "message": message})
