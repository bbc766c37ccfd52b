"""The tracker's refusals: a status, a stable reason code, a sentence to act on.

    TrackerRefusal              any refusal the service answers with (status, reason)
    └── AuthRefused             401: the signed-request check failed

Lower layers raise these (or RecipeIdentityError); the app's exception handlers
turn them into ``{"reason": ..., "detail": ...}`` JSON. Routes raise
HTTPException through :func:`tracker_service.routes.refuse`, same shape.
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
# The capability gate's reasons (tracker_service/capability.py): the seed's codes, the
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


class TrackerRefusal(Exception):
    status_code = 400

    def __init__(self, reason: str, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        if status_code is not None:
            self.status_code = status_code


class AuthRefused(TrackerRefusal):
    status_code = 401
