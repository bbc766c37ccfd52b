"""What the routes of every API face share: the key check, the body, one answer served.

A face's route parses its body (``answer_io.parse``), has its face module build the
internal request, opens it with ``answer_io.start``, then hands it to :func:`whole`
or :func:`stream`, which close the answer (the route sessions, the slot, the
credits) however it ends.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Protocol, TypeVar

from fastapi import Depends, Request
from pydantic import BaseModel

from tracker_service.api.routes.answer_io import (
    CLIENT_CLOSED,
    ROUTE_HEADER,
    EventStream,
    GatewayDep,
    broken,
    unless_disconnected,
)
from tracker_service.errors import ClientGone, GatewayError, GenerationFailed
from tracker_service.gateway.answer import Answer
from tracker_service.gateway.api_keys import Caller
from tracker_service.gateway.faces import common
from tracker_service.gateway.faces.common import Event, Outcome
from tracker_service.gateway.service import Gateway

M = TypeVar("M", bound=BaseModel)
GONE = CLIENT_CLOSED  # the status of an answer whose client left (nobody reads it)


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


async def whole(request: Request, gateway: Gateway, answer: Answer) -> Outcome | None:
    """The whole answer; None if the client left first (the route is closed then)."""
    outcome = "ok"
    try:
        return await unless_disconnected(request, common.collect(answer))
    except ClientGone:
        outcome = "cancelled"
        return None
    except GenerationFailed as exc:
        outcome = "route_failed"
        raise broken(exc) from exc
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
                for line in streamer.failure(broken(exc)):
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
