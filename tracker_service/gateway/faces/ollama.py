"""Ollama's API (``/api/chat``, ``/api/generate``, ``/api/tags``, ``/api/show``,
``/api/version``) onto the internal request.

Honoured: chat ``messages`` (with ``tool_calls`` and ``tool`` turns) and ``tools``;
generate's ``prompt``, ``system`` and ``raw``; ``format`` as ``"json"`` or a JSON
schema; ``options`` ``temperature``, ``top_p``, ``top_k``, ``seed``, ``num_predict``,
``stop`` and the two penalties; ``stream`` (NDJSON, on by default as Ollama's).
Options that only tune Ollama's own runtime (``num_ctx``, ``num_gpu``, ...) are
ignored; images, ``suffix``, ``template``, ``context`` and thinking are a 400 naming
the field. Refusals are Ollama's ``{"error": "..."}``. Model names are those of
``/v1/models``; a trailing ``:latest`` (which some clients add) is dropped. Without
``options.temperature`` the temperature is 0.8, Ollama's documented default.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tracker_service.errors import BadRequest, GatewayError
from tracker_service.gateway.answer import Answer
from tracker_service.gateway.faces.common import (
    CallMade,
    Ended,
    Event,
    InternalRequest,
    Outcome,
    TextDelta,
    arguments_json,
    arguments_object,
    internal,
    ndjson,
    refuse_fields,
    unsupported_extras,
)
from tracker_service.gateway.openai_schemas import ChatCompletionCreate, CompletionCreate
from tracker_service.gateway.tools import ToolCall

API_ID = "ollama"
PATHS = frozenset({"/api/chat", "/api/generate", "/api/tags", "/api/show", "/api/version"})
VERSION = "0.6.0"  # the Ollama API version these routes follow (clients check it)
DEFAULT_TEMPERATURE = 0.8
IGNORED = frozenset({"keep_alive"})
NEUTRAL: dict[str, Any] = {"think": False, "images": [], "suffix": "", "raw": False}
# Runtime tuning of Ollama's own server: no effect on what a route computes.
IGNORED_OPTIONS = frozenset(
    {
        "num_ctx",
        "num_batch",
        "num_gpu",
        "main_gpu",
        "num_thread",
        "use_mmap",
        "use_mlock",
        "low_vram",
        "numa",
        "num_keep",
        "vocab_only",
        "f16_kv",
        "logits_all",
    }
)
OPTIONS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "seed": "seed",
    "stop": "stop",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
}


ERROR_SCHEMA: dict[str, Any] = {
    "title": "OllamaErrorPublic",
    "type": "object",
    "required": ["error"],
    "properties": {"error": {"type": "string"}},
}


def owns_path(path: str) -> bool:
    return path in PATHS


def error_body(_status: int, _code: str, message: str, _param: str | None) -> dict[str, Any]:
    return {"error": message}


def model_name(name: str) -> str:
    return name.removesuffix(":latest")


class _Common(BaseModel):
    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1, max_length=600)
    format: str | dict[str, Any] | None = None
    options: dict[str, Any] | None = None
    stream: bool | None = True
    speculative: bool = True
    chain: bool = True


class ChatRequest(_Common):
    messages: list[dict[str, Any]] = Field(default_factory=list)
    tools: list[dict[str, Any]] | None = None


class GenerateRequest(_Common):
    prompt: str = ""
    system: str | None = None
    raw: bool | None = False


class ShowRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    model: str | None = None
    name: str | None = None  # older clients send the model as "name"
    verbose: bool | None = None


def _sampling(body: _Common) -> dict[str, Any]:
    refuse_fields(unsupported_extras(body.model_extra, IGNORED, NEUTRAL))
    fields: dict[str, Any] = {
        "model": model_name(body.model),
        "stream": body.stream is not False,
        "temperature": DEFAULT_TEMPERATURE,
        "speculative": body.speculative,
        "chain": body.chain,
    }
    options = dict(body.options or {})
    refuse_fields(
        f"options.{k}"
        for k, v in options.items()
        if k not in OPTIONS and k not in IGNORED_OPTIONS and k != "num_predict" and v is not None
    )
    for name, field in OPTIONS.items():
        if options.get(name) is not None:
            fields[field] = options[name]
    predict = options.get("num_predict")
    if isinstance(predict, int) and predict > 0:  # -1 (no limit) and -2 (fill): the default
        fields["max_tokens"] = predict
    return fields


def _format(fmt: str | dict[str, Any] | None) -> dict[str, Any] | None:
    if fmt is None or fmt == "":
        return None
    if fmt == "json":
        return {"type": "json_object"}
    if isinstance(fmt, dict):
        return {
            "type": "json_schema",
            "json_schema": {"name": "format", "schema": fmt, "strict": True},
        }
    raise BadRequest(f'format {fmt!r} is not "json" or a JSON schema', param="format")


def chat_internal(body: ChatRequest) -> ChatCompletionCreate:
    fields = _sampling(body)
    fields["messages"] = _messages(body.messages)
    if body.tools:
        for i, tool in enumerate(body.tools):
            if tool.get("type", "function") != "function":
                refuse_fields([f"tools[{i}]"], f" (tools of type {tool.get('type')!r})")
        fields["tools"] = [
            {"type": "function", "function": t.get("function") or {}} for t in body.tools
        ]
    fmt = _format(body.format)
    if fmt is not None:
        fields["response_format"] = fmt
    request = internal(ChatCompletionCreate, fields)
    assert isinstance(request, ChatCompletionCreate)
    return request


def _messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Ollama's turns; its tool calls carry no ids, so each is given one and a ``tool``
    turn answers the latest assistant turn's first call not yet answered (of its
    ``tool_name`` when given)."""
    out: list[dict[str, Any]] = []
    pending: list[tuple[str, str]] = []  # (call id, function name) not yet answered
    for i, m in enumerate(messages):
        role = m.get("role")
        if m.get("images"):
            refuse_fields([f"messages[{i}].images"], " (this gateway serves text models)")
        if role not in ("system", "user", "assistant", "tool"):
            raise BadRequest(f"messages[{i}] has role {role!r}", param=f"messages[{i}].role")
        content = str(m.get("content") or "")
        if role == "assistant" and m.get("tool_calls"):
            pending = []  # tool turns answer the latest calls; earlier ones stay unanswered
            calls = []
            for j, call in enumerate(m["tool_calls"]):
                function = call.get("function") or {}
                call_id = f"call_{i}_{j}"
                pending.append((call_id, str(function.get("name"))))
                arguments = arguments_json(function.get("arguments") or {})
                calls.append(
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": function.get("name"), "arguments": arguments},
                    }
                )
            out.append({"role": "assistant", "content": content, "tool_calls": calls})
        elif role == "tool":
            name = m.get("tool_name") or m.get("name")
            match = next((p for p in pending if name is None or p[1] == name), None)
            if match is None:
                raise BadRequest(
                    f"messages[{i}] is a tool result, but no earlier assistant turn called a "
                    "tool it could answer",
                    param=f"messages[{i}]",
                )
            pending.remove(match)
            out.append({"role": "tool", "tool_call_id": match[0], "content": content})
        else:
            out.append({"role": role, "content": content})
    if not out:
        raise BadRequest("messages is empty: send at least one message", param="messages")
    return out


def generate_internal(body: GenerateRequest) -> InternalRequest:
    fields = _sampling(body)  # template, context and the like are refused here
    fmt = _format(body.format)
    if body.raw:
        if fmt is not None:
            refuse_fields(["format"], " together with raw: true")
        return internal(CompletionCreate, {**fields, "prompt": body.prompt})
    messages = [{"role": "system", "content": body.system}] if body.system else []
    fields["messages"] = [*messages, {"role": "user", "content": body.prompt}]
    if fmt is not None:
        fields["response_format"] = fmt
    return internal(ChatCompletionCreate, fields)


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _timings(answer: Answer, outcome: Outcome) -> dict[str, Any]:
    record = answer.record
    elapsed = time.perf_counter() - record.started
    first = answer.generation.stats.first_token_at
    prompt_s = (first - record.started) if first is not None else 0.0
    return {
        "total_duration": int(elapsed * 1e9),
        "load_duration": 0,
        "prompt_eval_count": outcome.prompt_tokens,
        "prompt_eval_duration": int(prompt_s * 1e9),
        "eval_count": outcome.completion_tokens,
        "eval_duration": int(max(0.0, elapsed - prompt_s) * 1e9),
    }


def _done_reason(finish: str) -> str:
    return "length" if finish == "length" else "stop"


def _tool_calls(calls: list[ToolCall]) -> list[dict[str, Any]]:
    return [{"function": {"name": c.name, "arguments": arguments_object(c)}} for c in calls]


def chat_whole(model: str, answer: Answer, outcome: Outcome) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": outcome.text}
    if outcome.calls:
        message["tool_calls"] = _tool_calls(outcome.calls)
    return {
        "model": model,
        "created_at": _now(),
        "message": message,
        "done": True,
        "done_reason": _done_reason(outcome.finish),
        **_timings(answer, outcome),
    }


def generate_whole(model: str, answer: Answer, outcome: Outcome) -> dict[str, Any]:
    return {
        "model": model,
        "created_at": _now(),
        "response": outcome.text,
        "done": True,
        "done_reason": _done_reason(outcome.finish),
        **_timings(answer, outcome),
    }


def loaded(model: str, chat: bool) -> dict[str, Any]:
    """Ollama's answer to an empty request (it "loads" the model): nothing generated."""
    out: dict[str, Any] = {
        "model": model,
        "created_at": _now(),
        "done": True,
        "done_reason": "load",
    }
    if chat:
        out["message"] = {"role": "assistant", "content": ""}
    else:
        out["response"] = ""
    return out


class OllamaStream:
    """NDJSON lines: one per text delta (and one per tool call), then the ``done`` line."""

    def __init__(self, model: str, answer: Answer, *, chat: bool) -> None:
        self._model = model
        self._answer = answer
        self._chat = chat

    def _line(self, text: str, calls: list[ToolCall] | None = None, **done: Any) -> bytes:
        out: dict[str, Any] = {"model": self._model, "created_at": _now()}
        if self._chat:
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if calls:
                message["tool_calls"] = _tool_calls(calls)
            out["message"] = message
        else:
            out["response"] = text
        out["done"] = bool(done)
        return ndjson({**out, **done})

    def opening(self) -> list[bytes]:
        return []

    def on(self, event: Event) -> list[bytes]:
        if isinstance(event, TextDelta):
            return [self._line(event.text)]
        if isinstance(event, CallMade):
            return [self._line("", [event.call])]
        assert isinstance(event, Ended)
        answer = self._answer
        outcome = Outcome(
            "", prompt_tokens=answer.prompt_tokens, completion_tokens=answer.completion_tokens
        )
        return [self._line("", done_reason=_done_reason(event.finish), **_timings(answer, outcome))]

    def failure(self, error: GatewayError) -> list[bytes]:
        return [ndjson({"error": error.message})]
