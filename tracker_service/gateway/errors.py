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


class GatewayError(TrackerError):
    reason = "gateway-error"
    status_code = 500
    error_type = "server_error"
    code = "internal_error"

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


class BadRequest(GatewayError):
    status_code = 400
    error_type = "invalid_request_error"
    code = "invalid_parameter"


class Unauthorized(GatewayError):
    status_code = 401
    error_type = "invalid_request_error"
    code = "invalid_api_key"


class ModelNotFound(GatewayError):
    status_code = 404
    error_type = "invalid_request_error"
    code = "model_not_found"


class BodyTooLarge(GatewayError):
    status_code = 413
    error_type = "invalid_request_error"
    code = "body_too_large"


class RateLimited(GatewayError):
    status_code = 429
    error_type = "rate_limit_error"
    code = "rate_limit_exceeded"


class Unavailable(GatewayError):
    status_code = 503
    error_type = "server_error"
    code = "no_live_route"
