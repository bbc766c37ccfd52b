"""What every face shares: the internal request built and checked, a whole answer, its events.

The tool-call parsing and holding are :mod:`tracker_service.gateway.responses`' (the
chat stream's), read back here as plain events, so every API sees the same calls.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from tracker_service.errors import BadRequest
from tracker_service.gateway import responses
from tracker_service.gateway.answer import Answer
from tracker_service.gateway.openai_schemas import ChatCompletionCreate, CompletionCreate
from tracker_service.gateway.tools import ToolCall, parse_calls

MAX_PROBLEMS = 3
InternalRequest = ChatCompletionCreate | CompletionCreate


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class CallMade:
    """One whole tool call (arguments as JSON text); calls are held until whole."""

    call: ToolCall


@dataclass(frozen=True)
class Ended:
    finish: str  # "stop", "length" or "tool_calls"
    stop_text: str | None  # the stop sequence that ended it, if one did


Event = TextDelta | CallMade | Ended


@dataclass
class Outcome:
    """A whole answer, in no API's shape."""

    text: str
    calls: list[ToolCall] = field(default_factory=list)
    finish: str = "stop"
    stop_text: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0


def internal(kind: type[InternalRequest], fields: Mapping[str, Any]) -> InternalRequest:
    """The internal request; a value it refuses is a 400 naming the internal field (the
    faces check their own fields first, so this is rare)."""
    try:
        return kind.model_validate(dict(fields))
    except ValidationError as exc:
        problems = []
        for err in exc.errors()[:MAX_PROBLEMS]:
            where = ".".join(str(p) for p in err.get("loc", ())) or "body"
            message = str(err.get("msg", "")).removeprefix("Value error, ")
            problems.append(f"{where}: {message}")
        first = exc.errors()[0].get("loc", ()) if exc.errors() else ()
        raise BadRequest(
            "the request is invalid: " + "; ".join(problems),
            param=str(first[0]) if first else None,
        ) from exc


def refuse_fields(names: Iterable[str], why: str = "") -> None:
    """A 400 naming the first field the gateway cannot honour."""
    names = sorted(names)
    if names:
        raise BadRequest(
            f"this gateway does not support {', '.join(names)}{why}; remove "
            f"{'it' if len(names) == 1 else 'them'} from the request",
            code="unsupported_parameter",
            param=names[0],
        )


def unsupported_extras(
    extra: Mapping[str, Any] | None, ignored: Iterable[str] = (), neutral: Mapping[str, Any] = {}
) -> list[str]:
    """Fields outside a face's model: harmless ones ignored, neutral values accepted."""
    ignored = set(ignored)
    out = []
    for name, value in (extra or {}).items():
        if name in ignored or value is None:
            continue
        if name in neutral and value == neutral[name]:
            continue
        out.append(name)
    return out


def arguments_json(arguments: Any) -> str:
    """A call's arguments as JSON text (Anthropic and Ollama send an object)."""
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def arguments_object(call: ToolCall) -> dict[str, Any]:
    try:
        parsed = json.loads(call.arguments)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _usage(answer: Answer) -> tuple[int, int, int]:
    return answer.prompt_tokens, answer.completion_tokens, answer.generation.stats.cached_tokens


async def collect(answer: Answer) -> Outcome:
    """The first choice's whole answer, tool calls parsed as the chat API parses them."""
    choice = answer.choices[0]
    text = "".join(p.text for p in await choice.pieces())
    calls: list[ToolCall] = []
    if answer.functions:
        text, calls = parse_calls(text, [f["name"] for f in answer.functions])
    prompt, completion, cached = _usage(answer)
    return Outcome(
        text=text,
        calls=calls,
        finish="tool_calls" if calls else (choice.finish_reason or "stop"),
        stop_text=choice.stop_text,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cached_tokens=cached,
    )


async def events(answer: Answer) -> AsyncIterator[Event]:
    """The first choice as events: text as it is safe to show, each call when whole, the end."""
    choice = answer.choices[0]
    state = responses.ChatStreamChoice(0, answer.functions, answer.token_text, False)
    async for piece in choice.deltas():
        for part in state.push(piece):
            for event in _read(part):
                yield event
    for part in state.finish(choice.finish_reason):
        for event in _read(part):
            yield event
    yield Ended(
        "tool_calls" if state.called else (choice.finish_reason or "stop"), choice.stop_text
    )


def _read(part: dict[str, Any]) -> list[Event]:
    delta = part.get("delta") or {}
    out: list[Event] = []
    if delta.get("content"):
        out.append(TextDelta(str(delta["content"])))
    for call in delta.get("tool_calls") or []:
        function = call["function"]
        out.append(CallMade(ToolCall(call["id"], function["name"], function["arguments"])))
    return out


def sse(event: str, payload: Mapping[str, Any]) -> bytes:
    """One server-sent event with a name (Responses and Anthropic name theirs)."""
    return f"event: {event}\ndata: {json.dumps(payload, ensure_ascii=False)}\n\n".encode()


def ndjson(payload: Mapping[str, Any]) -> bytes:
    return (json.dumps(payload, ensure_ascii=False) + "\n").encode()
