"""Refusals of the gateway, answered in OpenAI's error shape.

    GatewayError            (a TrackerError) status, OpenAI ``type``/``code``, a sentence to act on
    ├── BadRequest          400 invalid_request_error (bad parameters, context overflow)
    ├── Unauthorized        401 invalid_api_key
    ├── ModelNotFound       404 model_not_found
    ├── BodyTooLarge        413 body_too_large (answered by the body limit, before any route)
    ├── RateLimited         429 rate_limit_exceeded (Retry-After)
    └── Unavailable         503 (Retry-After): no live route, recipe dark, route broke

Clients such as the official ``openai`` package read ``error.message`` and
``error.code``; ``Retry-After`` lets them back off by themselves.
"""

from __future__ import annotations

from typing import Any

from tracker_service.errors import TrackerError


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
