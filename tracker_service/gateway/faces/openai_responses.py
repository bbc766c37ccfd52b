"""OpenAI's Responses API (``POST /v1/responses``) onto the internal chat request.

Honoured: ``input`` (a string, or items: messages with text parts, ``function_call``,
``function_call_output``), ``instructions``, function ``tools`` and ``tool_choice``,
``text.format`` (``text``, ``json_object``, ``json_schema``), ``max_output_tokens``,
``temperature``, ``top_p``, ``stream``, ``store`` and ``previous_response_id``
(response_store.py). Built-in tools, files, images, reasoning items and the like are a
400 naming the field. The stream is the documented sequence: ``response.created``,
``response.in_progress``, per output item ``response.output_item.added`` then its
deltas (``response.output_text.delta`` within a content part, or
``response.function_call_arguments.delta``) and ``...done`` events, then
``response.completed`` (``response.incomplete`` at ``max_output_tokens``; a route that
breaks mid-answer: ``response.failed``), every event with its ``sequence_number``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tracker_service.errors import BadRequest, GatewayError
from tracker_service.gateway.answer import Answer
from tracker_service.gateway.faces.common import (
    CallMade,
    Ended,
    Event,
    Outcome,
    TextDelta,
    internal,
    refuse_fields,
    sse,
    unsupported_extras,
)
from tracker_service.gateway.openai_schemas import ChatCompletionCreate
from tracker_service.gateway.tools import ToolCall

API_ID = "openai-responses"
# Harmless for a stateless text model: accepted and ignored.
IGNORED = frozenset(
    {"metadata", "user", "service_tier", "parallel_tool_calls", "safety_identifier"}
)
NEUTRAL: dict[str, Any] = {"truncation": "disabled", "background": False, "include": []}
TEXT_PARTS = frozenset({"input_text", "output_text", "text"})


class ResponseCreate(BaseModel):
    """The request body; fields not declared here are refused unless IGNORED or NEUTRAL."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1, max_length=600)
    input: str | list[dict[str, Any]]
    instructions: str | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    text: dict[str, Any] | None = None
    max_output_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    stream: bool | None = False
    store: bool | None = True
    previous_response_id: str | None = None
    metadata: dict[str, Any] | None = None
    # MeshNet's extensions, as on chat completions
    speculative: bool = True
    chain: bool = True


def new_id() -> str:
    return f"resp_{uuid.uuid4().hex}"


def to_messages(body: ResponseCreate) -> list[dict[str, Any]]:
    """This request's input as internal chat messages (without instructions)."""
    if isinstance(body.input, str):
        return [{"role": "user", "content": body.input}]
    out: list[dict[str, Any]] = []
    for i, item in enumerate(body.input):
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            if role not in ("user", "assistant", "system", "developer"):
                raise BadRequest(
                    f"input[{i}] has role {role!r}; give user, assistant, system or developer",
                    param=f"input[{i}].role",
                )
            out.append({"role": role, "content": _text(item.get("content"), f"input[{i}]")})
        elif kind == "function_call":
            call = {
                "id": str(item.get("call_id") or item.get("id") or ""),
                "type": "function",
                "function": {"name": item.get("name"), "arguments": item.get("arguments") or "{}"},
            }
            if out and out[-1]["role"] == "assistant" and "tool_calls" in out[-1]:
                out[-1]["tool_calls"].append(call)
            else:
                out.append({"role": "assistant", "content": "", "tool_calls": [call]})
        elif kind == "function_call_output":
            output = item.get("output")
            content = output if isinstance(output, str) else _text(output, f"input[{i}]")
            out.append(
                {"role": "tool", "tool_call_id": str(item.get("call_id")), "content": content}
            )
        else:
            refuse_fields([f"input[{i}].type"], f" (input items of type {kind!r})")
    return out


def _text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for j, part in enumerate(content or []):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in TEXT_PARTS:
            refuse_fields(
                [f"{where}.content[{j}]"],
                f" (content parts of type {kind!r}: this gateway serves text models)",
            )
        parts.append(str(part.get("text", "")))
    return "".join(parts)


def to_internal(
    body: ResponseCreate, history: list[dict[str, Any]]
) -> tuple[ChatCompletionCreate, list[dict[str, Any]]]:
    """The internal request, and the conversation (history and input) it continues."""
    refuse_fields(unsupported_extras(body.model_extra, IGNORED, NEUTRAL))
    conversation = history + to_messages(body)
    system = [{"role": "system", "content": body.instructions}] if body.instructions else []
    fields: dict[str, Any] = {
        "model": body.model,
        "messages": system + conversation,
        "stream": bool(body.stream),
        "speculative": body.speculative,
        "chain": body.chain,
    }
    if body.temperature is not None:
        fields["temperature"] = body.temperature
    if body.top_p is not None:
        fields["top_p"] = body.top_p
    if body.max_output_tokens is not None:
        fields["max_completion_tokens"] = body.max_output_tokens
    if body.tools:
        fields["tools"] = [_tool(t, i) for i, t in enumerate(body.tools)]
    if body.tool_choice is not None:
        fields["tool_choice"] = _tool_choice(body.tool_choice)
    fmt = _format(body.text)
    if fmt is not None:
        fields["response_format"] = fmt
    request = internal(ChatCompletionCreate, fields)
    assert isinstance(request, ChatCompletionCreate)
    return request, conversation


def _tool(tool: dict[str, Any], i: int) -> dict[str, Any]:
    if tool.get("type") != "function":
        refuse_fields(
            [f"tools[{i}]"], f" (built-in tools such as {tool.get('type')!r}; only function tools)"
        )
    function = {k: tool[k] for k in ("name", "description", "parameters", "strict") if k in tool}
    return {"type": "function", "function": function}


def _tool_choice(choice: str | dict[str, Any]) -> str | dict[str, Any]:
    if isinstance(choice, str):
        if choice not in ("auto", "none", "required"):
            raise BadRequest(
                f"tool_choice {choice!r} is not one of auto, none, required", param="tool_choice"
            )
        return choice
    if choice.get("type") == "function" and choice.get("name"):
        return {"type": "function", "function": {"name": choice["name"]}}
    raise BadRequest(
        f"this gateway does not support a tool_choice of type {choice.get('type')!r}: give "
        'auto, none, required or {"type": "function", "name": ...}',
        code="unsupported_parameter",
        param="tool_choice",
    )


def _format(text: dict[str, Any] | None) -> dict[str, Any] | None:
    if not text:
        return None
    refuse_fields(k for k, v in text.items() if k != "format" and v not in (None, "medium"))
    fmt = text.get("format") or {"type": "text"}
    kind = fmt.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return {"type": "json_object"}
    if kind == "json_schema":
        if not isinstance(fmt.get("schema"), dict):
            raise BadRequest("text.format json_schema needs its schema", param="text.format")
        return {
            "type": "json_schema",
            "json_schema": {
                "name": fmt.get("name") or "schema",
                "schema": fmt["schema"],
                "strict": fmt.get("strict"),
            },
        }
    raise BadRequest(
        f"text.format type {kind!r} is not one of text, json_object, json_schema",
        param="text.format",
    )


def message_item(
    text: str, status: str = "completed", item_id: str | None = None
) -> dict[str, Any]:
    content = [] if status != "completed" else [_text_part(text)]
    return {
        "id": item_id or f"msg_{uuid.uuid4().hex}",
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": content,
    }


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def call_item(
    call: ToolCall, status: str = "completed", item_id: str | None = None
) -> dict[str, Any]:
    return {
        "id": item_id or f"fc_{uuid.uuid4().hex}",
        "type": "function_call",
        "status": status,
        "call_id": call.id,
        "name": call.name,
        "arguments": call.arguments if status == "completed" else "",
    }


def output_items(outcome: Outcome) -> list[dict[str, Any]]:
    items = [message_item(outcome.text)] if outcome.text or not outcome.calls else []
    return items + [call_item(c) for c in outcome.calls]


def usage(outcome: Outcome) -> dict[str, Any]:
    return {
        "input_tokens": outcome.prompt_tokens,
        "input_tokens_details": {"cached_tokens": outcome.cached_tokens},
        "output_tokens": outcome.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": outcome.prompt_tokens + outcome.completion_tokens,
    }


def response_object(
    response_id: str,
    body: ResponseCreate,
    created: int,
    *,
    status: str,
    output: list[dict[str, Any]],
    outcome: Outcome | None,
    error: dict[str, Any] | None = None,
) -> dict[str, Any]:
    incomplete = (
        {"reason": "max_output_tokens"}
        if outcome is not None and outcome.finish == "length"
        else None
    )
    fmt = (body.text or {}).get("format") or {"type": "text"}
    return {
        "id": response_id,
        "object": "response",
        "created_at": created,
        "status": status,
        "background": False,
        "error": error,
        "incomplete_details": incomplete,
        "instructions": body.instructions,
        "max_output_tokens": body.max_output_tokens,
        "model": body.model,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": body.previous_response_id,
        "reasoning": {"effort": None, "summary": None},
        "store": body.store is not False,
        "temperature": body.temperature if body.temperature is not None else 1.0,
        "text": {"format": fmt},
        "tool_choice": body.tool_choice if body.tool_choice is not None else "auto",
        "tools": body.tools or [],
        "top_p": body.top_p if body.top_p is not None else 1.0,
        "truncation": "disabled",
        "usage": usage(outcome) if outcome is not None else None,
        "metadata": body.metadata or {},
    }


def whole(response_id: str, body: ResponseCreate, created: int, outcome: Outcome) -> dict[str, Any]:
    status = "incomplete" if outcome.finish == "length" else "completed"
    return response_object(
        response_id, body, created, status=status, output=output_items(outcome), outcome=outcome
    )


def answered_message(outcome: Outcome) -> dict[str, Any]:
    """The answer as an internal chat message, to continue the conversation with."""
    message: dict[str, Any] = {"role": "assistant", "content": outcome.text}
    if outcome.calls:
        message["tool_calls"] = [c.to_json() for c in outcome.calls]
    return message


class ResponseStream:
    """The documented event sequence for one answer; ``on_done`` gets the whole outcome."""

    def __init__(
        self,
        response_id: str,
        body: ResponseCreate,
        answer: Answer,
        on_done: Callable[[Outcome], None],
    ) -> None:
        self._id = response_id
        self._body = body
        self._answer = answer
        self._created = int(time.time())
        self._on_done = on_done
        self._seq = 0
        self._output: list[dict[str, Any]] = []
        self._text_id: str | None = None  # the message item open now
        self._text = ""
        self._calls: list[ToolCall] = []

    def _event(self, kind: str, **fields: Any) -> bytes:
        payload = {"type": kind, "sequence_number": self._seq, **fields}
        self._seq += 1
        return sse(kind, payload)

    def _response(self, status: str, outcome: Outcome | None, error: Any = None) -> dict[str, Any]:
        return response_object(
            self._id,
            self._body,
            self._created,
            status=status,
            output=list(self._output),
            outcome=outcome,
            error=error,
        )

    def opening(self) -> list[bytes]:
        return [
            self._event("response.created", response=self._response("in_progress", None)),
            self._event("response.in_progress", response=self._response("in_progress", None)),
        ]

    def on(self, event: Event) -> list[bytes]:
        if isinstance(event, TextDelta):
            out = self._open_text()
            self._text += event.text
            out.append(
                self._event(
                    "response.output_text.delta",
                    item_id=self._text_id,
                    output_index=len(self._output),
                    content_index=0,
                    delta=event.text,
                    logprobs=[],
                )
            )
            return out
        if isinstance(event, CallMade):
            return self._close_text() + self._call(event.call)
        return self._end(event)

    def _open_text(self) -> list[bytes]:
        if self._text_id is not None:
            return []
        self._text_id = f"msg_{uuid.uuid4().hex}"
        index = len(self._output)
        item = message_item("", "in_progress", self._text_id)
        return [
            self._event("response.output_item.added", output_index=index, item=item),
            self._event(
                "response.content_part.added",
                item_id=self._text_id,
                output_index=index,
                content_index=0,
                part=_text_part(""),
            ),
        ]

    def _close_text(self) -> list[bytes]:
        if self._text_id is None:
            return []
        index, item_id, text = len(self._output), self._text_id, self._text
        item = message_item(text, "completed", item_id)
        self._output.append(item)
        self._text_id = None
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        return [
            self._event("response.output_text.done", **where, text=text, logprobs=[]),
            self._event("response.content_part.done", **where, part=_text_part(text)),
            self._event("response.output_item.done", output_index=index, item=item),
        ]

    def _call(self, call: ToolCall) -> list[bytes]:
        self._calls.append(call)
        index, item_id = len(self._output), f"fc_{uuid.uuid4().hex}"
        added = call_item(call, "in_progress", item_id)
        done = call_item(call, "completed", item_id)
        self._output.append(done)
        where = {"item_id": item_id, "output_index": index}
        return [
            self._event("response.output_item.added", output_index=index, item=added),
            self._event("response.function_call_arguments.delta", **where, delta=call.arguments),
            self._event(
                "response.function_call_arguments.done",
                **where,
                name=call.name,
                arguments=call.arguments,
            ),
            self._event("response.output_item.done", output_index=index, item=done),
        ]

    def _end(self, ended: Ended) -> list[bytes]:
        out = []
        if not self._output and self._text_id is None:
            out += self._open_text()  # an empty answer is still one (empty) message
        out += self._close_text()
        answer = self._answer
        outcome = Outcome(
            self._text,
            self._calls,
            ended.finish,
            ended.stop_text,
            answer.prompt_tokens,
            answer.completion_tokens,
            answer.generation.stats.cached_tokens,
        )
        self._on_done(outcome)
        if ended.finish == "length":
            return [
                *out,
                self._event("response.incomplete", response=self._response("incomplete", outcome)),
            ]
        return [
            *out,
            self._event("response.completed", response=self._response("completed", outcome)),
        ]

    def failure(self, error: GatewayError) -> list[bytes]:
        detail = {"code": error.code, "message": error.message}
        return [self._event("response.failed", response=self._response("failed", None, detail))]
