"""What every answering route shares: the gateway, the body, a start, a client that leaves.

The OpenAI routes and the other API faces (Responses, Anthropic Messages, Ollama)
parse their body with :func:`parse`, open the answer with :func:`start` (logged and
counted as every gateway request), watch for a client that leaves
(:func:`unless_disconnected`, :class:`EventStream`) and turn a route that broke
mid-answer into :func:`broken`'s 503.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Coroutine
from typing import Annotated, Any, TypeVar

import anyio
from fastapi import Depends, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ValidationError
from starlette.types import Receive, Scope, Send

from tracker_service.errors import (
    BadRequest,
    ClientGone,
    GatewayError,
    GenerationFailed,
    Unavailable,
)
from tracker_service.gateway.answer import Answer
from tracker_service.gateway.api_keys import Caller
from tracker_service.gateway.observability import RequestRecord
from tracker_service.gateway.openai_schemas import ChatCompletionCreate, CompletionCreate
from tracker_service.gateway.service import Gateway

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
MAX_BODY_ERRORS = 3
CLIENT_CLOSED = 499  # nginx's code for a request the client abandoned
# Which nodes served the answer (the route at its end), for people and the demo.
ROUTE_HEADER = "X-Meshnet-Route"


def get_gateway(request: Request) -> Gateway:
    gateway: Gateway = request.app.state.gateway
    return gateway


GatewayDep = Annotated[Gateway, Depends(get_gateway)]


class EventStream(StreamingResponse):
    """Server-sent events that stop, and close their generator, when the client goes.

    Starlette leaves an abandoned body iterator to the garbage collector when a
    send fails, and notices a disconnect only at the next send; here a watcher
    on ``receive`` cancels the stream at once and the generator is always
    closed, so its route sessions end with the client.
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = self.body_iterator
        try:
            async with anyio.create_task_group() as group:

                async def watch() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    group.cancel_scope.cancel()

                group.start_soon(watch)
                with contextlib.suppress(OSError):
                    await self.stream_response(send)
                group.cancel_scope.cancel()
        finally:
            if isinstance(body, AsyncGenerator):
                with anyio.CancelScope(shield=True):
                    await body.aclose()


def parse(model: type[M], raw: bytes) -> M:
    """The route's body; a 400 naming the first fields that are wrong."""
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        problems = []
        for err in exc.errors()[:MAX_BODY_ERRORS]:
            where = ".".join(str(p) for p in err.get("loc", ())) or "body"
            # Our validators' sentences, without pydantic's "Value error, " in front.
            problems.append(f"{where}: {str(err.get('msg', '')).removeprefix('Value error, ')}")
        first = exc.errors()[0].get("loc", ()) if exc.errors() else ()
        raise BadRequest(
            "the request body is invalid: " + "; ".join(problems),
            param=str(first[0]) if first else None,
        ) from exc


async def start(
    gateway: Gateway, body: ChatCompletionCreate | CompletionCreate, caller: Caller, endpoint: str
) -> Answer:
    """The answer opened (key limits, route, slot); a refusal is logged and counted."""
    record = RequestRecord(endpoint, body.model, caller.name, body.stream)
    try:
        return await gateway.prepare(body, caller, record)
    except GatewayError as exc:
        record.outcome = exc.code
        record.finish(gateway.metrics)
        raise


def broken(exc: GenerationFailed, retry_after_s: int | None = 5) -> Unavailable:
    """The 503 of a route that failed mid-answer with no replacement to take it on."""
    return Unavailable(
        f"the route failed mid-generation and no replacement was found: {exc.message}",
        code="route_failed",
        retry_after_s=retry_after_s,
    )


async def unless_disconnected(request: Request, work: Coroutine[Any, Any, T]) -> T:
    """`work`'s result, or ClientGone (with `work` cancelled) if the client leaves first:
    a non-streamed answer must not keep its route busy for a caller that is gone."""
    task = asyncio.ensure_future(work)

    async def watch() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    watcher = asyncio.ensure_future(watch())
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
    if not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, GenerationFailed):
            await task
        raise ClientGone
    return task.result()
