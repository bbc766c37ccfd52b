"""Anthropic's Messages API: ``POST /v1/messages`` and ``/v1/messages/count_tokens``
(faces/anthropic_messages.py translates). Keys come as ``x-api-key`` or
``Authorization: Bearer``; refusals are Anthropic's shape (app.py picks it by path).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response

from tracker_service.api.metrics import counted
from tracker_service.api.routes.answer_io import ROUTE_HEADER, GatewayDep, parse, start
from tracker_service.api.routes.face_runner import GONE, FaceCallerDep, stream, whole
from tracker_service.gateway.faces import anthropic_messages as face

router = APIRouter(prefix="/v1", tags=["anthropic"], dependencies=[Depends(counted(face.API_ID))])


@router.post("/messages", response_model=None)
async def create_message(request: Request, gateway: GatewayDep, caller: FaceCallerDep) -> Response:
    body = parse(face.MessageCreate, await request.body())
    internal = face.to_internal(body)
    answer = await start(gateway, internal, caller, "messages")
    message_id = face.new_id()
    if internal.stream:
        streamer = face.MessageStream(message_id, body.model, answer)
        return stream(gateway, answer, streamer, "text/event-stream")
    outcome = await whole(request, gateway, answer)
    if outcome is None:
        return Response(status_code=GONE)
    return JSONResponse(
        face.whole(message_id, body.model, outcome),
        headers={ROUTE_HEADER: answer.generation.stats.route_header},
    )


@router.post("/messages/count_tokens")
async def count_tokens(
    request: Request, gateway: GatewayDep, _caller: FaceCallerDep
) -> dict[str, Any]:
    body = parse(face.CountTokens, await request.body())
    return {"input_tokens": await gateway.count_prompt(face.count_request(body))}
