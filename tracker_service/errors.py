"""The tracker's errors: one root, a stable reason code on each, a sentence to act on.

Every exception tracker_service defines is defined here, in the tree below (grouped
by the layer that raises it), and derives from :class:`TrackerError`, so
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
    │   │   ├── BadRequest            400 invalid_parameter (bad parameters, context overflow)
    │   │   ├── Unauthorized          401 invalid_api_key
    │   │   ├── ModelNotFound         404 model_not_found
    │   │   ├── BodyTooLarge          413 body_too_large (the body limit, before any route)
    │   │   ├── RateLimited           429 rate_limit_exceeded (Retry-After)
    │   │   └── Unavailable           503 (Retry-After): no live route, recipe dark, route broke
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

from typing import Any

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
# The capability gate's reasons (tracker_service/domain/capability_gate.py): the seed's codes, the
# same the node's own gate gives (core/doctor/admission_gate.py), so a refusal reads alike on
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
# An invite code nobody issued (tracker_service/store/invites.py has the other refusals).
INVITE_UNKNOWN = "invite-unknown"


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


# --- domain --------------------------------------------------------------------------


# raised in tracker_service.domain.credit_rules
class LinkRefused(TrackerError):
    """A linking statement that does not prove what it claims (reason per refusal)."""

    reason = "link-refused"

    def __init__(self, reason: str, message: str, status_code: int = 422) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.status_code = status_code


# raised in tracker_service.domain.keys
class KeyFileExposed(TrackerError):
    """A key file others can read is refused: it may already be someone else's key."""

    reason = "key-file-exposed"


class KeyFileError(TrackerError, RuntimeError):
    """The key file exists but cannot be used; the message says what to fix."""

    reason = "key-file-unusable"


# raised in tracker_service.domain.recipe_digests
class RecipeIdentityError(TrackerError, ValueError):
    """A presented identity block is malformed or internally inconsistent."""

    reason = "bad-identity"


class FingerprintMismatch(RecipeIdentityError):
    """A supplied digest is inconsistent with its identity declaration.

    A digest is an integrity and compatibility claim, not an authenticated
    statement of what a node executes; distributed certification remains the
    trust boundary.
    """

    reason = "fingerprint-mismatch"


# raised in tracker_service.domain.route_formation
class NoRoute(TrackerError):
    """No chain of live, reachable shards covers the model; the message says where."""

    reason = "no-route"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# raised in tracker_service.domain.auditability
class Unreplayable(NoRoute):
    """Every route left needs a hop no other node can replay, through a node on
    probation: refused rather than served unaudited."""

    reason = "unreplayable"


# raised in tracker_service.domain.tickets
class ReceiptError(TrackerError, ValueError):
    """A hop receipt is malformed, forged, or does not match the session it closes."""

    reason = "bad-receipt"


# raised in tracker_service.domain.wire
class WireFormatError(TrackerError, ValueError):
    """A value on the wire does not have the shape the contract fixes."""

    reason = "bad-wire-format"


# raised in tracker_service.domain.wire_frames
class FrameError(TrackerError, ValueError):
    """A frame a node sent does not have the shape the wire contract fixes."""

    reason = "bad-frame"


# --- store ---------------------------------------------------------------------------


# raised in tracker_service.store.artifacts
class ArtifactRefusal(TrackerError):
    reason = "artifact-refused"

    def __init__(self, reason: str, message: str, status_code: int = 400) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.status_code = status_code


# raised in tracker_service.store.db
class StoreError(TrackerError, RuntimeError):
    """The database cannot be opened or migrated; the message names the URL's problem."""

    reason = "store-unusable"


# raised in tracker_service.store.invites
class InviteRefused(TrackerError):
    """A code that cannot be redeemed; ``reason`` says why, the message what to do."""

    reason = INVITE_UNKNOWN

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


# raised in tracker_service.store.jobs
class QueueRefusal(TrackerError):
    reason = "queue-refused"

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


# --- relay ---------------------------------------------------------------------------


# raised in tracker_service.relay.hub
class LinkGone(TrackerError):
    """The node's link closed while a stream was using it."""

    reason = "link-gone"


# raised in tracker_service.relay.link_auth
class RelayLinkRefused(TrackerError):
    """The handshake does not authenticate a node; the message says why."""

    reason = "link-refused"


# raised in tracker_service.relay.mux
class MuxError(TrackerError, ValueError):
    """A link message that is not a mux frame; the sender's link is at fault."""

    reason = "bad-mux-frame"


# --- security ------------------------------------------------------------------------


# raised in tracker_service.security.address_limits
class AddressLimited(TrackerError):
    """Over the per-address limit; ``retry_after_s`` says when a request fits again."""

    reason = "rate-limited"

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


# raised in tracker_service.security.endpoint_policy
class EndpointRefused(TrackerError):
    """The endpoint may not be dialled; the message says why and what to do."""

    reason = ENDPOINT_REFUSED


# raised in tracker_service.security.node_tls
class PinMismatch(TrackerError):
    """The node's certificate is not the one it registered."""

    reason = TLS_PIN_MISMATCH


# --- services ------------------------------------------------------------------------


# raised in tracker_service.services.certifier
class CertificationFailed(TrackerError):
    reason = "certification-failed"

    def __init__(self, reason: str, message: str, *, node_id: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.node_id = node_id  # the hop that failed, when one did


# raised in tracker_service.services.hop_link
class RouteFailure(TrackerError):
    """A hop refused or broke the session. ``hop_index``/``node_id`` name the hop,
    so a caller can exclude that node and ask for another route."""

    reason = "route-failed"

    def __init__(self, reason: str, message: str, *, hop_index: int, node_id: str) -> None:
        super().__init__(f"hop {hop_index} (node {node_id[:12]}): {message} [{reason}]")
        self.reason = reason
        self.message = message
        self.hop_index = hop_index
        self.node_id = node_id


# raised in tracker_service.services.hop_replay
class BudgetSpent(TrackerError):
    """The audit's budget ran out while a replayer was working through the frames."""

    reason = "audit-budget-spent"

    def __init__(self, replayer: str, answered: int) -> None:
        super().__init__(f"{replayer[:12]} had replayed {answered} frames")


# raised in tracker_service.services.reachability
class ChallengeFailed(TrackerError):
    """The node did not prove it holds its key on this port; the message says how."""

    reason = "challenge-failed"


# raised in tracker_service.services.route_planner
class RouteRefused(TrackerError):
    """The recipe may not be routed for this purpose; the message says why."""

    reason = "route-refused"

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


# --- gateway -------------------------------------------------------------------------


# raised in tracker_service.gateway.chat_template
class TemplateError(TrackerError, ValueError):
    """The template does not compile, or refused these messages (its own words)."""

    reason = "bad-chat-template"


# raised across the gateway, answered in OpenAI's shape (``error.message``/``code``)
def _openai_type(status_code: int) -> str:
    """OpenAI's ``error.type`` for a status: its clients branch on it."""
    if status_code == 429:
        return "rate_limit_error"
    return "server_error" if status_code >= 500 else "invalid_request_error"


class GatewayError(TrackerError):
    reason = "gateway-error"
    status_code = 500
    error_type = "server_error"
    code = "internal_error"

    def __init_subclass__(cls, *, status_code: int, code: str, **kwargs: Any) -> None:
        # Each refusal is a status and a default code; the OpenAI type follows the status.
        super().__init_subclass__(**kwargs)
        cls.status_code = status_code
        cls.error_type = _openai_type(status_code)
        cls.code = code

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        param: str | None = None,
        retry_after_s: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.retry_after_s = retry_after_s
        if code is not None:
            self.code = code
        self.reason = self.code

    def body(self) -> dict[str, Any]:
        return {
            "error": {
                "message": self.message,
                "type": self.error_type,
                "param": self.param,
                "code": self.code,
            }
        }

    def headers(self) -> dict[str, str]:
        if self.retry_after_s is None:
            return {}
        return {"Retry-After": str(max(1, int(self.retry_after_s)))}


class BadRequest(GatewayError, status_code=400, code="invalid_parameter"):
    """Bad parameters, or a context overflow."""


class Unauthorized(GatewayError, status_code=401, code="invalid_api_key"):
    """No API key, an unknown or revoked one, or none configured off loopback."""


class ModelNotFound(GatewayError, status_code=404, code="model_not_found"):
    """The request names a model the gateway does not serve."""


class BodyTooLarge(GatewayError, status_code=413, code="body_too_large"):
    """Answered by the body limit, before any route."""


class RateLimited(GatewayError, status_code=429, code="rate_limit_exceeded"):
    """Over a per-minute limit (Retry-After)."""


class Unavailable(GatewayError, status_code=503, code="no_live_route"):
    """No live route, the recipe dark, or the route broke (Retry-After)."""


# raised in tracker_service.gateway.generation
class GenerationFailed(TrackerError):
    """No route could carry the generation on; the message says why."""

    reason = "generation-failed"

    def __init__(self, message: str, *, no_route: bool) -> None:
        super().__init__(message)
        self.message = message
        self.no_route = no_route


# raised in tracker_service.gateway.model_assets
class AssetsUnavailable(TrackerError):
    """No verified tokenizer (or template) could be had; the message says which."""

    reason = "assets-unavailable"


# --- api -----------------------------------------------------------------------------


# raised in tracker_service.api.routes.answer_io
class ClientGone(TrackerError):
    """The client disconnected before a non-streamed answer was complete."""

    reason = "client-gone"


# --- cli -----------------------------------------------------------------------------


# raised in tracker_service.cli.errors
class CliRefusal(TrackerError):
    """A refusal the command states as it is."""

    reason = "cli-refused"

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason
