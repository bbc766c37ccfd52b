"""The tracker's errors: one root, a stable reason code on each, a sentence to act on.

Every exception tracker_service defines derives from :class:`TrackerError`, so
``except TrackerError`` catches what the tracker raises on purpose, and each one
carries ``reason``: a class-level code, or the instance's own where one class
covers several refusals (``TrackerRefusal``, ``RouteFailure``, ...). Classes
that callers already catch as ``ValueError``/``RuntimeError`` keep that base too.

    TrackerError                      root; ``reason`` on every error
    ├── TrackerRefusal                any refusal the service answers with (status, reason)
    │   └── AuthRefused               401: the signed-request check failed
    ├── domain
    │   ├── RecipeIdentityError       (ValueError) a malformed identity block; bad-identity
    │   │   └── FingerprintMismatch   a digest inconsistent with its declaration
    │   ├── WireFormatError           (ValueError) a value without the contract's shape
    │   ├── FrameError                (ValueError) a step frame without the contract's shape
    │   ├── ReceiptError              (ValueError) a hop receipt malformed or forged
    │   ├── NoRoute                   no chain of live shards covers the model
    │   │   └── Unreplayable          only a newcomer no other node can check holds a range
    │   ├── LinkRefused               a credit account claim that does not prove itself
    │   ├── KeyFileExposed            the key file is readable by others
    │   └── KeyFileError              (RuntimeError) the key file cannot be used
    ├── store
    │   ├── StoreError                (RuntimeError) the database cannot be opened or migrated
    │   ├── QueueRefusal              the job queue refuses (reason per refusal)
    │   ├── InviteRefused             an invite code that cannot be redeemed (reason per refusal)
    │   └── ArtifactRefusal           the artifact store refuses (reason, status)
    ├── relay
    │   ├── RelayLinkRefused          a relay link handshake does not authenticate
    │   ├── LinkGone                  a node's link closed under a stream
    │   └── MuxError                  (ValueError) a link message that is not a mux frame
    ├── security
    │   ├── AddressLimited            over a per-address limit (Retry-After)
    │   ├── EndpointRefused           an endpoint the policy will not dial
    │   └── PinMismatch               a node's certificate is not the one it registered
    ├── services
    │   ├── CertificationFailed       a certification attempt failed (reason per failure)
    │   ├── ChallengeFailed           a node did not prove its key on its port
    │   ├── RouteRefused              the ledger's gate refuses the purpose
    │   ├── BudgetSpent               an audit's budget ran out mid-replay (hop_replay, internal)
    │   └── RouteFailure              a hop refused or broke a route session
    ├── gateway
    │   ├── GatewayError              OpenAI-shaped refusal; reason is its ``code``
    │   │   ├── BadRequest, Unauthorized, ModelNotFound, BodyTooLarge,
    │   │   └── RateLimited, Unavailable
    │   ├── GenerationFailed          no route could carry a generation on
    │   ├── AssetsUnavailable         no verified tokenizer or template
    │   └── TemplateError             (ValueError) a chat template that fails
    ├── api
    │   └── ClientGone                the client left before its answer was complete
    └── cli
        └── CliRefusal                printed as ``meshnet-tracker: <sentence> [<reason>]``

Lower layers raise these; the app's exception handlers turn refusals into
``{"reason": ..., "detail": ...}`` JSON. Routes raise HTTPException through
:func:`tracker_service.api.routes.refuse`, same shape.

No name is defined twice here. Three names recur in core's tree (core/errors.py)
with the same meaning, the same check made independently because the tracker never
imports core: PinMismatch, RecipeIdentityError, FingerprintMismatch. Any other
name shared with core or the app is a collision (tests/support/error_names.py).
"""

from __future__ import annotations

# 401 reasons of the signed-request contract (docs/wire.md#signed-requests).
BAD_SIGNATURE = "bad-signature"
UNKNOWN_NODE = "unknown-node"
STALE_TIMESTAMP = "stale-timestamp"
NONCE_REUSED = "nonce-reused"
NODE_ID_MISMATCH = "node-id-mismatch"
MISSING_HEADERS = "missing-headers"

# Other refusal reasons.
RE_REGISTER = "re-register"
BANNED = "banned"
QUARANTINED = "quarantined"
JOIN_TOKEN_REQUIRED = "join-token-required"
JOIN_TOKEN_INVALID = "join-token-invalid"
# The capability gate's reasons (tracker_service/api/capability_gate.py): the seed's codes, the
# same the node's own gate gives (core/admission.py), so a refusal reads alike on
# either side and a node handles the tracker's exactly as its own.
CAPABILITY_NO_REPORT = "no-report"
CAPABILITY_MODEL_MISMATCH = "model-mismatch"
CAPABILITY_SHARD_MISMATCH = "shard-mismatch"
CAPABILITY_RECIPE_MISMATCH = "recipe-mismatch"
CAPABILITY_BACKEND_MISMATCH = "backend-mismatch"
CAPABILITY_NOT_PASSED = "not-passed"
CAPABILITY_STALE = "stale"
INVALID_REQUEST = "invalid-request"
BODY_TOO_LARGE = "body-too-large"
ADMIN_REQUIRED = "admin-required"
NOT_FOUND = "not-found"
ENDPOINT_REFUSED = "endpoint-refused"
TOO_MANY_NODES = "too-many-nodes"
# The data plane's TLS pin (docs/wire.md#tls): a bad or missing pin at registration,
# and a node whose certificate is not the one it registered.
BAD_TLS_PIN = "bad-tls-pin"
TLS_PIN_REQUIRED = "tls-pin-required"
# A relay-shaped endpoint on a relay this tracker does not offer, or for another node.
UNKNOWN_RELAY = "unknown-relay"
TLS_PIN_MISMATCH = "tls-pin-mismatch"


class TrackerError(Exception):
    """The root of every error the tracker defines."""

    reason: str = "tracker-error"


class TrackerRefusal(TrackerError):
    status_code = 400
    reason = "refused"

    def __init__(self, reason: str, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        if status_code is not None:
            self.status_code = status_code


class AuthRefused(TrackerRefusal):
    status_code = 401
