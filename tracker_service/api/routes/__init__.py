"""HTTP routes, one module per resource. Only routes raise HTTPException."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from fastapi import HTTPException
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError

from tracker_service import errors
from tracker_service.api.schemas.common import ErrorPublic
from tracker_service.domain.wire import SIGNED_HEADERS

M = TypeVar("M", bound=BaseModel)


def refuse(status_code: int, reason: str, message: str) -> HTTPException:
    """An HTTPException the app renders as ``{"reason": ..., "detail": ...}``."""
    return HTTPException(status_code, detail={"reason": reason, "detail": message})


def refusal_response(
    status_code: int, reason: str, detail: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """The one shape every refusal is answered with: ``{"reason": ..., "detail": ...}``."""
    return JSONResponse(
        {"reason": reason, "detail": detail}, status_code=status_code, headers=headers
    )


def refusal_parts(exc: HTTPException) -> tuple[str, str]:
    """The reason code and sentence of an HTTPException (one from :func:`refuse` or not)."""
    if isinstance(exc.detail, dict) and "reason" in exc.detail:
        return str(exc.detail["reason"]), str(exc.detail["detail"])
    return f"http-{exc.status_code}", str(exc.detail)


def http_refusal_response(exc: HTTPException) -> JSONResponse:
    """:func:`refusal_response` for an HTTPException; its headers are kept (a 405's
    ``Allow``, a 429's ``Retry-After``)."""
    reason, detail = refusal_parts(exc)
    return refusal_response(exc.status_code, reason, detail, exc.headers)


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI entries documenting the refusal shape for `codes`."""
    return {code: {"model": ErrorPublic} for code in codes}


# Models of bodies read by hand after signature verification; app.py adds their
# schemas to the OpenAPI components so the document still describes them.
SIGNED_BODY_MODELS: list[type[BaseModel]] = []


def signed_body(model: type[BaseModel] | None) -> dict[str, Any]:
    """``openapi_extra`` declaring a signed route's headers and JSON body (`model`)."""
    extra: dict[str, Any] = {
        "parameters": [
            {"name": name, "in": "header", "required": True, "schema": {"type": "string"}}
            for name in SIGNED_HEADERS
        ]
    }
    if model is None:
        return extra
    if model not in SIGNED_BODY_MODELS:
        SIGNED_BODY_MODELS.append(model)
    ref = {"$ref": f"#/components/schemas/{model.__name__}"}
    extra["requestBody"] = {"required": True, "content": {"application/json": {"schema": ref}}}
    return extra


def parse_body(model: type[M], body: bytes) -> M:
    """Validate a signed body; 422 with the first problems stated, never a 500."""
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'body'}: {err['msg']}"
            for err in exc.errors()[:5]
        )
        raise refuse(
            422, errors.INVALID_REQUEST, f"the request body is invalid: {problems}"
        ) from exc
