"""What the routes of every API face share: the key check, the body, one answer served.

A face's route parses its body, has its face module build the internal request, and
hands it here: :func:`start` (``Gateway.prepare``, logged and counted as every
gateway request), then :func:`whole` or :func:`stream`, which close the answer (the
route sessions, the slot, the credits) however it ends.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Protocol, TypeVar

from fastapi import Depends, Request
from pydantic import BaseModel, ValidationError

from tracker_service.api.routes.openai import (
    CLIENT_CLOSED,
    ROUTE_HEADER,
    ClientGone,
    EventStream,
    GatewayDep,
    _unless_disconnected,
)
from tracker_service.gateway.api_keys import Caller
from tracker_service.gateway.errors import BadRequest, GatewayError, Unavailable
from tracker_service.gateway.faces import common
from tracker_service.gateway.faces.common import Event, InternalRequest, Outcome
from tracker_service.gateway.generation import GenerationFailed
from tracker_service.gateway.observability import RequestRecord
from tracker_service.gateway.service import Answer, Gateway

M = TypeVar("M", bound=BaseModel)
GONE = CLIENT_CLOSED  # the status of an answer whose client left (nobody reads it)
MAX_BODY_ERRORS = 3


class Streamer(Protocol):
    """A face's event sequence: what opens it, each event's lines, a failure's lines."""

    def opening(self) -> list[bytes]: ...

    def on(self, event: Event) -> list[bytes]: ...

    def failure(self, error: GatewayError) -> list[bytes]: ...


async def face_caller(request: Request, gateway: GatewayDep) -> Caller:
    """The same gateway keys, sent as ``Authorization: Bearer`` or (Anthropic's clients)
    as ``x-api-key``."""
    authorization = request.headers.get("Authorization")
    key = request.headers.get("x-api-key")
    if not authorization and key:
        authorization = f"Bearer {key}"
    host = request.client.host if request.client else None
    return await gateway.authenticate(authorization, host)


FaceCallerDep = Annotated[Caller, Depends(face_caller)]


def parse(model: type[M], raw: bytes) -> M:
    """The face's body; a 400 naming the first field that is wrong."""
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        problems = []
        for err in exc.errors()[:MAX_BODY_ERRORS]:
            where = ".".join(str(p) for p in err.get("loc", ())) or "body"
            problems.append(f"{where}: {str(err.get('msg', '')).removeprefix('Value error, ')}")
        first = exc.errors()[0].get("loc", ()) if exc.errors() else ()
        raise BadRequest(
            "the request body is invalid: " + "; ".join(problems),
            param=str(first[0]) if first else None,
        ) from exc


async def start(gateway: Gateway, body: InternalRequest, caller: Caller, endpoint: str) -> Answer:
    record = RequestRecord(endpoint, body.model, caller.name, body.stream)
    try:
        return await gateway.prepare(body, caller, record)
    except GatewayError as exc:
        record.outcome = exc.code
        record.finish(gateway.metrics)
        raise


def _broken(exc: GenerationFailed) -> Unavailable:
    return Unavailable(
        f"the route failed mid-generation and no replacement was found: {exc.message}",
        code="route_failed",
        retry_after_s=5,
    )


async def whole(request: Request, gateway: Gateway, answer: Answer) -> Outcome | None:
    """The whole answer; None if the client left first (the route is closed then)."""
    outcome = "ok"
    try:
        return await _unless_disconnected(request, common.collect(answer))
    except ClientGone:
        outcome = "cancelled"
        return None
    except GenerationFailed as exc:
        outcome = "route_failed"
        raise _broken(exc) from exc
    finally:
        await answer.close(gateway.limiter, gateway.metrics, outcome)


def stream(gateway: Gateway, answer: Answer, streamer: Streamer, media_type: str) -> EventStream:
    async def body() -> AsyncIterator[bytes]:
        outcome = "cancelled"  # until it ends by itself
        try:
            for line in streamer.opening():
                yield line
            try:
                async for event in common.events(answer):
                    for line in streamer.on(event):
                        yield line
                outcome = "ok"
            except GenerationFailed as exc:
                outcome = "route_failed"
                for line in streamer.failure(_broken(exc)):
                    yield line
        finally:
            await answer.close(gateway.limiter, gateway.metrics, outcome)

    return EventStream(
        body(),
        media_type=media_type,
        headers={
            "Cache-Control": "no-cache",
            "X-Accel-Buffering": "no",
            ROUTE_HEADER: answer.generation.stats.route_header,
        },
    )
