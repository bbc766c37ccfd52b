"""OpenAI's Responses API: ``POST /v1/responses`` (faces/openai_responses.py translates).

Refusals are OpenAI's shape, as everywhere else under ``/v1``.
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response

from tracker_service.api.metrics import counted
from tracker_service.api.routes.answer_io import ROUTE_HEADER, GatewayDep, parse, start
from tracker_service.api.routes.face_runner import GONE, FaceCallerDep, stream, whole
from tracker_service.gateway.faces import openai_responses as face
from tracker_service.gateway.faces.common import Outcome
from tracker_service.gateway.faces.response_store import ResponseStore

router = APIRouter(prefix="/v1", tags=["openai"], dependencies=[Depends(counted(face.API_ID))])


@router.post("/responses", response_model=None)
async def create_response(request: Request, gateway: GatewayDep, caller: FaceCallerDep) -> Response:
    body = parse(face.ResponseCreate, await request.body())
    store: ResponseStore = request.app.state.response_store
    history: list[dict[str, Any]] = []
    if body.previous_response_id:
        history = store.conversation(caller.key_id, body.previous_response_id)
    internal, conversation = face.to_internal(body, history)
    response_id = face.new_id()

    def keep(outcome: Outcome) -> None:
        if body.store is not False:
            store.put(caller.key_id, response_id, [*conversation, face.answered_message(outcome)])

    answer = await start(gateway, internal, caller, "responses")
    if internal.stream:
        streamer = face.ResponseStream(response_id, body, answer, keep)
        return stream(gateway, answer, streamer, "text/event-stream")
    created = int(time.time())
    outcome = await whole(request, gateway, answer)
    if outcome is None:
        return Response(status_code=GONE)
    keep(outcome)
    return JSONResponse(
        face.whole(response_id, body, created, outcome),
        headers={ROUTE_HEADER: answer.generation.stats.route_header},
    )
