"""The OpenAI-compatible API: ``/v1/models``, ``/v1/chat/completions``, ``/v1/completions``.

Every refusal is in OpenAI's error shape (``{"error": {"message", "type",
"param", "code"}}``), so the official clients raise their usual exceptions.
Streams are server-sent events ending in ``data: [DONE]``; a failure after
the first token is one error event, then ``[DONE]``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response

from tracker_service.api.metrics import counted
from tracker_service.api.routes.answer_io import (
    CLIENT_CLOSED,
    ROUTE_HEADER,
    EventStream,
    GatewayDep,
    broken,
    parse,
    start,
    unless_disconnected,
)
from tracker_service.errors import (
    BadRequest,
    ClientGone,
    GatewayError,
    GenerationFailed,
    ModelNotFound,
)
from tracker_service.gateway import responses
from tracker_service.gateway.answer import Answer, Choice, Piece
from tracker_service.gateway.api_keys import Caller
from tracker_service.gateway.openai_schemas import ChatCompletionCreate, CompletionCreate
from tracker_service.gateway.service import Gateway

log = logging.getLogger(__name__)

router = APIRouter(prefix="/v1", tags=["openai"], dependencies=[Depends(counted("openai"))])


def error_response(exc: GatewayError) -> JSONResponse:
    return JSONResponse(exc.body(), status_code=exc.status_code, headers=exc.headers())


def _error_type(status_code: int) -> str:
    if status_code == 429:
        return "rate_limit_error"
    return "server_error" if status_code >= 500 else "invalid_request_error"


def openai_refusal_response(
    status_code: int, reason: str, message: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """A tracker refusal met under ``/v1`` (a handler's, not the gateway's), in OpenAI's
    shape: the reason code in snake case, the sentence as the message."""
    error = {"message": message, "type": _error_type(status_code), "param": None}
    code = reason.replace("-", "_")
    return JSONResponse(
        {"error": {**error, "code": code}}, status_code=status_code, headers=headers
    )


def unknown_url_response(
    status_code: int, message: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """A 404/405 under ``/v1`` in OpenAI's shape, so its clients show the sentence."""
    error = {"message": message, "type": "invalid_request_error", "param": None}
    return JSONResponse(
        {"error": {**error, "code": "unknown_url"}}, status_code=status_code, headers=headers
    )


async def caller_of(request: Request, gateway: GatewayDep) -> Caller:
    host = request.client.host if request.client else None
    return await gateway.authenticate(request.headers.get("Authorization"), host)


CallerDep = Annotated[Caller, Depends(caller_of)]


@router.get("/models")
async def list_models(gateway: GatewayDep, _caller: CallerDep) -> dict[str, Any]:
    """Models with a certified recipe and a live route right now."""
    served = await gateway.models()
    return {
        "object": "list",
        "data": [
            {"id": m.id, "object": "model", "created": m.created, "owned_by": "meshnet"}
            for m in served
        ],
    }


@router.get("/models/{model:path}")
async def retrieve_model(model: str, gateway: GatewayDep, _caller: CallerDep) -> dict[str, Any]:
    """One model of ``GET /v1/models`` (the ``openai`` client's ``models.retrieve``)."""
    served = await gateway.models()
    for m in served:
        if m.id == model:
            return {"id": m.id, "object": "model", "created": m.created, "owned_by": "meshnet"}
    names = ", ".join(m.id for m in served) or "none right now"
    raise ModelNotFound(
        f"the model '{model}' does not serve on this tracker now; GET /v1/models lists the "
        f"models that do ({names})",
        param="model",
    )


@router.post("/chat/completions", response_model=None)
async def chat_completions(request: Request, gateway: GatewayDep, caller: CallerDep) -> Response:
    body = parse(ChatCompletionCreate, await request.body())
    return await _answer(request, gateway, body, caller, "chat.completions")


@router.post("/completions", response_model=None)
async def completions(request: Request, gateway: GatewayDep, caller: CallerDep) -> Response:
    body = parse(CompletionCreate, await request.body())
    return await _answer(request, gateway, body, caller, "completions")


async def _answer(
    request: Request,
    gateway: Gateway,
    body: ChatCompletionCreate | CompletionCreate,
    caller: Caller,
    endpoint: str,
) -> Response:
    if body.stream_options is not None and not body.stream:
        # As OpenAI: options for a stream that will not be streamed are a mistake.
        raise BadRequest(
            "stream_options is only allowed when stream is true: send stream: true, "
            "or drop stream_options",
            param="stream_options",
        )
    answer = await start(gateway, body, caller, endpoint)
    chat = isinstance(body, ChatCompletionCreate)
    if body.stream:
        events = _stream(gateway, answer, body, chat=chat)
        return EventStream(
            events,
            media_type="text/event-stream",
            headers={
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
                ROUTE_HEADER: answer.generation.stats.route_header,
            },
        )
    outcome = "ok"
    try:
        pieces = await unless_disconnected(request, _all_pieces(answer))
    except ClientGone:
        outcome = "cancelled"
        return Response(status_code=CLIENT_CLOSED)  # nobody reads it; the route is closed
    except GenerationFailed as exc:
        outcome = "route_failed"
        raise broken(exc) from exc
    finally:
        await answer.close(gateway.limiter, gateway.metrics, outcome)
    choices = [
        _whole_choice(answer, choice, got, body, chat=chat)
        for choice, got in zip(answer.choices, pieces, strict=True)
    ]
    return JSONResponse(
        headers={ROUTE_HEADER: answer.generation.stats.route_header},
        content={
            "id": answer.id,
            "object": "chat.completion" if chat else "text_completion",
            "created": answer.created,
            "model": answer.model,
            "choices": choices,
            "usage": answer.usage,
        },
    )


async def _all_pieces(answer: Answer) -> list[list[Piece]]:
    """Every choice decoded together (their route sessions step concurrently)."""
    return list(await asyncio.gather(*(c.pieces() for c in answer.choices)))


def _whole_choice(
    answer: Answer,
    choice: Choice,
    pieces: list[Piece],
    body: ChatCompletionCreate | CompletionCreate,
    *,
    chat: bool,
) -> dict[str, Any]:
    text = "".join(p.text for p in pieces)
    tokens = [t for p in pieces for t in p.logprobs]
    logprobs: dict[str, Any] | None = None
    if chat:
        if body.wants_logprobs:
            logprobs = responses.chat_logprobs(tokens, answer.token_text)
        msg, called = responses.message(text, answer.functions)
        return {
            "index": choice.index,
            "message": msg,
            "logprobs": logprobs,
            "finish_reason": "tool_calls" if called else choice.finish_reason,
        }
    if body.wants_logprobs:
        logprobs = responses.completion_logprobs(tokens, answer.token_text)
    return {
        "index": choice.index,
        "text": text,
        "logprobs": logprobs,
        "finish_reason": choice.finish_reason,
    }


def _event(payload: dict[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {data}\n\n".encode()


async def _merged(answer: Answer) -> AsyncIterator[tuple[Choice, Piece | None]]:
    """Every choice's pieces as they come, interleaved; ``(choice, None)`` when one ends.
    The choices' route sessions step concurrently, so the nodes batch them."""
    if len(answer.choices) == 1:
        only = answer.choices[0]
        async for piece in only.deltas():
            yield only, piece
        yield only, None
        return
    queue: asyncio.Queue[tuple[Choice, Piece | None] | BaseException] = asyncio.Queue()

    async def drain(choice: Choice) -> None:
        try:
            async for piece in choice.deltas():
                await queue.put((choice, piece))
            await queue.put((choice, None))
        except Exception as exc:  # handed to the reader, who raises it
            await queue.put(exc)

    tasks = [asyncio.ensure_future(drain(c)) for c in answer.choices]
    try:
        ended = 0
        while ended < len(tasks):
            item = await queue.get()
            if isinstance(item, BaseException):
                raise item
            if item[1] is None:
                ended += 1
            yield item
    finally:
        for task in tasks:
            task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.gather(*tasks, return_exceptions=True)


async def _stream(
    gateway: Gateway,
    answer: Answer,
    body: ChatCompletionCreate | CompletionCreate,
    *,
    chat: bool,
) -> AsyncIterator[bytes]:
    """SSE chunks; a client that goes away cancels this, and ``finally`` closes the route."""
    kind = "chat.completion.chunk" if chat else "text_completion"

    def event(choices: list[dict[str, Any]]) -> bytes:
        return _event(
            {
                "id": answer.id,
                "object": kind,
                "created": answer.created,
                "model": answer.model,
                "choices": choices,
            }
        )

    states = {
        c.index: responses.ChatStreamChoice(
            c.index, answer.functions, answer.token_text, body.wants_logprobs
        )
        for c in answer.choices
    }
    offsets = dict.fromkeys(states, 0)

    def text_choice(choice: Choice, piece: Piece | None) -> dict[str, Any]:
        logprobs = None
        if piece is not None and body.wants_logprobs:
            logprobs = responses.completion_logprobs(
                piece.logprobs, answer.token_text, offsets[choice.index]
            )
            offsets[choice.index] += sum(len(t) for t in logprobs["tokens"])
        return {
            "index": choice.index,
            "text": piece.text if piece is not None else "",
            "logprobs": logprobs,
            "finish_reason": None if piece is not None else choice.finish_reason,
        }

    outcome = "cancelled"
    try:
        if chat:
            yield event([s.first() for s in states.values()])
        try:
            async for choice, piece in _merged(answer):
                if not chat:
                    yield event([text_choice(choice, piece)])
                    continue
                state = states[choice.index]
                parts = state.push(piece) if piece else state.finish(choice.finish_reason)
                for part in parts:
                    yield event([part])
        except GenerationFailed as exc:
            outcome = "route_failed"
            yield _event(broken(exc, retry_after_s=None).body())
            yield _event("[DONE]")
            return
        if body.include_usage:
            yield _event(
                {
                    "id": answer.id,
                    "object": kind,
                    "created": answer.created,
                    "model": answer.model,
                    "choices": [],
                    "usage": answer.usage,
                }
            )
        yield _event("[DONE]")
        outcome = "ok"
    finally:
        # Shielded: on a client disconnect this runs inside a cancelled scope.
        with anyio.CancelScope(shield=True):
            await answer.close(gateway.limiter, gateway.metrics, outcome)
