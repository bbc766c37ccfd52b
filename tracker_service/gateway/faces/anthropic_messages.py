"""Anthropic's Messages API (``POST /v1/messages``, ``/v1/messages/count_tokens``) onto
the internal chat request.

Honoured: ``system`` (a string or text blocks), ``messages`` with ``text``,
``tool_use`` and ``tool_result`` blocks, ``tools`` (client tools with an
``input_schema``) and ``tool_choice`` (``auto``, ``any``, ``tool``, ``none``),
``max_tokens`` (required, as Anthropic's), ``stop_sequences``, ``temperature``,
``top_p``, ``top_k``, ``stream``. Images, documents, server tools and extended
thinking are a 400 naming the field. Refusals are Anthropic's
``{"type": "error", "error": {"type", "message"}}``.

The stream is the documented one: ``message_start``, per content block
``content_block_start``, ``content_block_delta`` (``text_delta`` or
``input_json_delta``) and ``content_block_stop``, then ``message_delta`` with the
``stop_reason`` and ``message_stop``; a route that breaks mid-answer: an ``error``
event.
"""

from __future__ import annotations

import json
import uuid
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
    arguments_object,
    internal,
    refuse_fields,
    sse,
    unsupported_extras,
)
from tracker_service.gateway.openai_schemas import ChatCompletionCreate
from tracker_service.gateway.tools import ToolCall

API_ID = "anthropic"
PREFIX = "/v1/messages"
IGNORED = frozenset({"metadata", "service_tier", "cache_control"})
NEUTRAL: dict[str, Any] = {"thinking": {"type": "disabled"}}
STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    503: "overloaded_error",
    529: "overloaded_error",
}


ERROR_SCHEMA: dict[str, Any] = {
    "title": "AnthropicErrorPublic",
    "type": "object",
    "required": ["type", "error"],
    "properties": {
        "type": {"type": "string", "enum": ["error"]},
        "error": {
            "type": "object",
            "required": ["type", "message"],
            "properties": {"type": {"type": "string"}, "message": {"type": "string"}},
        },
    },
}


def owns_path(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def error_body(status: int, _code: str, message: str, _param: str | None) -> dict[str, Any]:
    kind = ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


class MessageCreate(BaseModel):
    """The request body; fields not declared here are refused unless IGNORED or NEUTRAL."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1, max_length=600)
    messages: list[dict[str, Any]] = Field(min_length=1)
    max_tokens: int = Field(ge=1)
    system: str | list[dict[str, Any]] | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: dict[str, Any] | None = None
    stop_sequences: list[str] | None = None
    temperature: float | None = Field(default=None, ge=0.0, le=1.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    top_k: int | None = Field(default=None, ge=0)
    stream: bool | None = False
    # structured outputs: {"format": {"type": "json_schema", "schema": {...}}}
    output_config: dict[str, Any] | None = None
    speculative: bool = True
    chain: bool = True


class CountTokens(BaseModel):
    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1, max_length=600)
    messages: list[dict[str, Any]] = Field(min_length=1)
    system: str | list[dict[str, Any]] | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: dict[str, Any] | None = None


def _blocks(content: Any, where: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise BadRequest(f"{where}.content must be a string or a list of blocks", param=where)
    return [b for b in content if isinstance(b, dict)]


def _plain(content: Any, where: str) -> str:
    parts = []
    for j, block in enumerate(_blocks(content, where)):
        if block.get("type") != "text":
            refuse_fields([f"{where}.content[{j}]"], f" (blocks of type {block.get('type')!r})")
        parts.append(str(block.get("text", "")))
    return "".join(parts)


def to_messages(body: MessageCreate | CountTokens) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if body.system:
        out.append({"role": "system", "content": _plain(body.system, "system")})
    for i, message in enumerate(body.messages):
        role, where = message.get("role"), f"messages[{i}]"
        if role not in ("user", "assistant"):
            raise BadRequest(f"{where} has role {role!r}; give user or assistant", param=where)
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        results = 0  # tool_result blocks: each became a tool message above the turn's text
        for j, block in enumerate(_blocks(message.get("content"), where)):
            kind = block.get("type")
            if kind == "text":
                texts.append(str(block.get("text", "")))
            elif kind == "tool_use" and role == "assistant":
                calls.append(
                    {
                        "id": str(block.get("id")),
                        "type": "function",
                        "function": {
                            "name": block.get("name"),
                            "arguments": json.dumps(block.get("input") or {}),
                        },
                    }
                )
            elif kind == "tool_result" and role == "user":
                results += 1
                result = _plain(block.get("content") or "", f"{where}.content[{j}]")
                if block.get("is_error"):
                    result = f"error: {result}"
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": str(block.get("tool_use_id")),
                        "content": result,
                    }
                )
            else:
                refuse_fields(
                    [f"{where}.content[{j}]"], f" (blocks of type {kind!r} in a {role} turn)"
                )
        if calls:
            out.append({"role": "assistant", "content": "".join(texts), "tool_calls": calls})
        elif texts or not results:
            out.append({"role": role, "content": "".join(texts)})
    return out


def _tools(body: MessageCreate | CountTokens) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if body.tools:
        tools = []
        for i, tool in enumerate(body.tools):
            if tool.get("type") not in (None, "custom"):
                refuse_fields([f"tools[{i}]"], f" (server tools such as {tool.get('type')!r})")
            function = {"name": tool.get("name"), "parameters": tool.get("input_schema")}
            if tool.get("description"):
                function["description"] = tool["description"]
            tools.append({"type": "function", "function": function})
        fields["tools"] = tools
    choice = body.tool_choice
    if choice is not None:
        kind = choice.get("type")
        if kind == "auto":
            fields["tool_choice"] = "auto"
        elif kind == "any":
            fields["tool_choice"] = "required"
        elif kind == "none":
            fields["tool_choice"] = "none"
        elif kind == "tool":
            fields["tool_choice"] = {"type": "function", "function": {"name": choice.get("name")}}
        else:
            raise BadRequest(
                f"tool_choice type {kind!r} is not one of auto, any, tool, none",
                param="tool_choice",
            )
    return fields


def to_internal(body: MessageCreate) -> ChatCompletionCreate:
    refuse_fields(unsupported_extras(body.model_extra, IGNORED, NEUTRAL))
    fields: dict[str, Any] = {
        "model": body.model,
        "messages": to_messages(body),
        "max_tokens": body.max_tokens,
        "stream": bool(body.stream),
        "speculative": body.speculative,
        "chain": body.chain,
        **_tools(body),
    }
    for name in ("temperature", "top_p", "top_k"):
        if getattr(body, name) is not None:
            fields[name] = getattr(body, name)
    if body.stop_sequences:
        fields["stop"] = body.stop_sequences
    if body.output_config:
        fields["response_format"] = _output_format(body.output_config)
    request = internal(ChatCompletionCreate, fields)
    assert isinstance(request, ChatCompletionCreate)
    return request


def _output_format(config: dict[str, Any]) -> dict[str, Any]:
    refuse_fields(
        f"output_config.{k}" for k, v in config.items() if k != "format" and v is not None
    )
    fmt = config.get("format") or {}
    if fmt.get("type") != "json_schema" or not isinstance(fmt.get("schema"), dict):
        raise BadRequest(
            'output_config.format must be {"type": "json_schema", "schema": {...}}',
            param="output_config.format",
        )
    return {"type": "json_schema", "json_schema": {"name": "output", "schema": fmt["schema"]}}


def count_request(body: CountTokens) -> ChatCompletionCreate:
    """The internal request whose prompt count_tokens measures."""
    refuse_fields(unsupported_extras(body.model_extra, IGNORED, NEUTRAL))
    fields = {"model": body.model, "messages": to_messages(body), **_tools(body)}
    request = internal(ChatCompletionCreate, fields)
    assert isinstance(request, ChatCompletionCreate)
    return request


def _usage(outcome: Outcome) -> dict[str, Any]:
    return {
        "input_tokens": outcome.prompt_tokens,
        "output_tokens": outcome.completion_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": outcome.cached_tokens,
    }


def _tool_use(call: ToolCall) -> dict[str, Any]:
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": arguments_object(call)}


def stop_reason(finish: str, stop_text: str | None) -> str:
    return "stop_sequence" if stop_text is not None else STOP_REASONS.get(finish, "end_turn")


def whole(message_id: str, model: str, outcome: Outcome) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if outcome.text or not outcome.calls:
        content.append({"type": "text", "text": outcome.text})
    content += [_tool_use(c) for c in outcome.calls]
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason(outcome.finish, outcome.stop_text),
        "stop_sequence": outcome.stop_text,
        "usage": _usage(outcome),
    }


def new_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


class MessageStream:
    """Anthropic's SSE events for one answer."""

    def __init__(self, message_id: str, model: str, answer: Answer) -> None:
        self._id = message_id
        self._model = model
        self._answer = answer
        self._index = 0
        self._text_open = False

    def opening(self) -> list[bytes]:
        message: dict[str, Any] = {
            "id": self._id,
            "type": "message",
            "role": "assistant",
            "model": self._model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": self._answer.prompt_tokens, "output_tokens": 1},
        }
        return [
            sse("message_start", {"type": "message_start", "message": message}),
            sse("ping", {"type": "ping"}),
        ]

    def on(self, event: Event) -> list[bytes]:
        if isinstance(event, TextDelta):
            out = self._open_text()
            delta = {"type": "text_delta", "text": event.text}
            return [*out, self._block("content_block_delta", delta=delta)]
        if isinstance(event, CallMade):
            out = self._close_text()
            start = {**_tool_use(event.call), "input": {}}
            delta = {"type": "input_json_delta", "partial_json": event.call.arguments}
            out += [
                self._block("content_block_start", content_block=start),
                self._block("content_block_delta", delta=delta),
                self._block("content_block_stop"),
            ]
            self._index += 1
            return out
        return self._end(event)

    def _block(self, kind: str, **fields: Any) -> bytes:
        return sse(kind, {"type": kind, "index": self._index, **fields})

    def _open_text(self) -> list[bytes]:
        if self._text_open:
            return []
        self._text_open = True
        return [self._block("content_block_start", content_block={"type": "text", "text": ""})]

    def _close_text(self) -> list[bytes]:
        if not self._text_open:
            return []
        self._text_open = False
        out = [self._block("content_block_stop")]
        self._index += 1
        return out

    def _end(self, ended: Ended) -> list[bytes]:
        out = self._open_text() if self._index == 0 and not self._text_open else []
        out += self._close_text()
        delta = {
            "stop_reason": stop_reason(ended.finish, ended.stop_text),
            "stop_sequence": ended.stop_text,
        }
        usage = {"output_tokens": self._answer.completion_tokens}
        return [
            *out,
            sse("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}),
            sse("message_stop", {"type": "message_stop"}),
        ]

    def failure(self, error: GatewayError) -> list[bytes]:
        return [sse("error", error_body(error.status_code, error.code, error.message, error.param))]
