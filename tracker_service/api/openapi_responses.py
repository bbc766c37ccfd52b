"""The refusals every route can give, written into the OpenAPI document.

Some answers do not come from a route's own code and so are missing from what
FastAPI generates: the body-size middleware's 413 on any request with a body, FastAPI's 400 on
a body that is not JSON,
the validation handler's 422 on a malformed parameter, and the 404 for a path
that matches no route. A public API documents every answer a client can get
(and ``tests/tracker_service/api/test_openapi_fuzz.py`` holds the tracker to it), so
:func:`document_refusals` adds them, with the one refusal shape, after the
document is generated. The OpenAI-compatible gateway (``/v1/...``) answers in
OpenAI's error shape instead, with its own set of statuses.
"""

from __future__ import annotations

from typing import Any

from tracker_service.gateway import faces

METHODS = ("get", "put", "post", "delete", "patch")
ERROR_REF = {"$ref": "#/components/schemas/ErrorPublic"}
OPENAI_ERROR = "OpenAIErrorPublic"
OPENAI_ERROR_SCHEMA: dict[str, Any] = {
    "title": OPENAI_ERROR,
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["message", "type", "code"],
            "properties": {
                "message": {"type": "string"},
                "type": {"type": "string"},
                "param": {"type": ["string", "null"]},
                "code": {"type": ["string", "null"]},
            },
        }
    },
}
# What the gateway answers (tracker_service/errors.py); the shared
# middleware and handlers answer /v1 in the same OpenAI shape (413, 422, 429).
GATEWAY_STATUSES = {
    400: "the request is invalid (OpenAI error shape)",
    401: "no valid API key",
    404: "no such model",
    429: "over the key's rate limit, or too many failed authentications from this address "
    "(code auth_throttled); Retry-After says when to retry",
    503: "no certified route can serve the model now",
}
REFUSALS = {
    400: "the body is not parseable JSON",
    404: "nothing is found at this path",
    413: "the request body is over the tracker's limit",
    422: "a parameter or the body is invalid",
    429: "too many failed authentications (or requests) from this address; see Retry-After",
}


def _response(description: str, ref: dict[str, str]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": ref}}}


def document_refusals(document: dict[str, Any]) -> dict[str, Any]:
    """Add the refusals the middleware and handlers give to every operation (in place)."""
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    schemas.setdefault(OPENAI_ERROR, OPENAI_ERROR_SCHEMA)
    openai_ref = {"$ref": f"#/components/schemas/{OPENAI_ERROR}"}
    for path, item in document.get("paths", {}).items():
        for method in METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            responses = operation.setdefault("responses", {})
            # Every answer under /v1 is in OpenAI's shape, the throttles' and handlers' too;
            # an API face's paths (gateway/faces/) answer in that API's shape.
            shape = openai_ref if path.startswith("/v1/") else ERROR_REF
            face = faces.error_shape_of(path)
            if face is not None:
                schemas.setdefault(face.schema["title"], face.schema)
                shape = {"$ref": f"#/components/schemas/{face.schema['title']}"}
            if shape is not ERROR_REF:
                for status, description in GATEWAY_STATUSES.items():
                    responses.setdefault(str(status), _response(description, shape))
            for status, description in REFUSALS.items():
                responses.setdefault(str(status), _response(description, shape))
            # FastAPI documents its HTTPValidationError here, but the tracker's handler
            # answers every validation failure in the one refusal shape.
            responses["422"] = _response(REFUSALS[422], shape)
    return document
