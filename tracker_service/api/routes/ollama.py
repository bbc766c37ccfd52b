"""Ollama's API at its own paths: ``/api/chat``, ``/api/generate``, ``/api/tags``,
``/api/show``, ``/api/version`` (faces/ollama.py translates). They sit beside the
tracker's ``/api/v1/`` without touching it; ``serve --ollama-port`` also answers them
(and only them) on a second port, for clients that assume Ollama's 11434.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response

from tracker_service.api.metrics import counted
from tracker_service.api.routes.answer_io import ROUTE_HEADER, GatewayDep, parse, start
from tracker_service.api.routes.face_runner import GONE, FaceCallerDep, stream, whole
from tracker_service.errors import BadRequest
from tracker_service.gateway.faces import ollama as face
from tracker_service.gateway.faces.common import InternalRequest
from tracker_service.gateway.model_catalogue import ServedModel

router = APIRouter(prefix="/api", tags=["ollama"], dependencies=[Depends(counted(face.API_ID))])
NDJSON = "application/x-ndjson"


@router.post("/chat", response_model=None)
async def chat(request: Request, gateway: GatewayDep, caller: FaceCallerDep) -> Response:
    body = parse(face.ChatRequest, await request.body())
    if not body.messages:
        return JSONResponse(face.loaded(body.model, chat=True))
    return await _answer(request, gateway, caller, body.model, face.chat_internal(body), chat=True)


@router.post("/generate", response_model=None)
async def generate(request: Request, gateway: GatewayDep, caller: FaceCallerDep) -> Response:
    body = parse(face.GenerateRequest, await request.body())
    if not body.prompt:
        return JSONResponse(face.loaded(body.model, chat=False))
    internal = face.generate_internal(body)
    return await _answer(request, gateway, caller, body.model, internal, chat=False)


async def _answer(
    request: Request,
    gateway: GatewayDep,
    caller: FaceCallerDep,
    model: str,
    internal: InternalRequest,
    *,
    chat: bool,
) -> Response:
    answer = await start(gateway, internal, caller, "api/chat" if chat else "api/generate")
    if internal.stream:
        return stream(gateway, answer, face.OllamaStream(model, answer, chat=chat), NDJSON)
    outcome = await whole(request, gateway, answer)
    if outcome is None:
        return Response(status_code=GONE)
    shape = face.chat_whole if chat else face.generate_whole
    return JSONResponse(
        shape(model, answer, outcome),
        headers={ROUTE_HEADER: answer.generation.stats.route_header},
    )


def _details(served: ServedModel) -> dict[str, Any]:
    axes = served.info.axes
    family = str(axes.get("architecture_adapter") or "")
    return {
        "parent_model": "",
        "format": "safetensors",
        "family": family,
        "families": [family] if family else [],
        "parameter_size": "",
        "quantization_level": str(axes.get("weight_quantization") or ""),
    }


def _when(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


@router.get("/tags")
async def tags(gateway: GatewayDep, _caller: FaceCallerDep) -> dict[str, Any]:
    """The certified models serving now (the names of /v1/models)."""
    return {
        "models": [
            {
                "name": m.id,
                "model": m.id,
                "modified_at": _when(m.created),
                "size": 0,
                "digest": m.info.key[0],
                "details": _details(m),
            }
            for m in await gateway.models()
        ]
    }


@router.post("/show")
async def show(request: Request, gateway: GatewayDep, _caller: FaceCallerDep) -> dict[str, Any]:
    body = parse(face.ShowRequest, await request.body())
    name = body.model or body.name
    if not name:
        raise BadRequest('say which model: send {"model": NAME}', param="model")
    served, assets = await gateway.served(face.model_name(name))
    template = assets.template.source if assets.template is not None else ""
    family = _details(served)["family"] or "llm"
    info: dict[str, Any] = {"general.architecture": family}
    if assets.context_length is not None:
        info[f"{family}.context_length"] = assets.context_length
    return {
        "modelfile": "",
        "parameters": "",
        "template": template or "",
        "details": _details(served),
        "model_info": info,
        "capabilities": ["completion", "tools"],
        "modified_at": _when(served.created),
    }


@router.get("/version")
async def version() -> dict[str, str]:
    return {"version": face.VERSION}
