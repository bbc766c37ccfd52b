"""Tools in the prompt and tool calls out of the answer.

A chat template that knows tools (it mentions ``tools``) gets them as its
``tools`` variable, with assistant ``tool_calls`` and ``tool`` messages as they
came. A template without tool syntax (the default model, SmolLM2, has none:
its template only writes ``<|im_start|>role\\ncontent<|im_end|>``) gets the
documented preamble below appended to the system message, in the widely
trained Hermes form::

    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call>

and earlier calls and results are written in the same form (a ``tool``
message becomes a ``user`` turn holding ``<tool_response>...</tool_response>``),
so any template can render them. The answer is parsed back: each
``<tool_call>`` block whose JSON names an offered function becomes one entry
of ``message.tool_calls``.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tracker_service.gateway.constraint import TOOL_CALL_CLOSE, TOOL_CALL_OPEN

TOOL_CALL_START = "<tool_call>"
_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)

PREAMBLE = (
    "You can call functions. The functions you may call are listed in <tools></tools> "
    "as JSON signatures:\n<tools>\n{tools}\n</tools>\n"
    "To call a function, answer with exactly one block like this and nothing else:\n"
    '<tool_call>\n{{"name": "<function name>", "arguments": {{<arguments as JSON>}}}}\n'
    "</tool_call>\n"
    "A function's result comes back in <tool_response></tool_response>; then answer the "
    "user in plain words."
)
TOOL_RESULT = (
    "<tool_response>\n{result}\n</tool_response>\n"
    "That is what {name} returned. Answer my question with it in plain words."
)


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as OpenAI sends it

    def to_json(self, index: int | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }
        if index is not None:
            out["index"] = index
        return out


def template_knows_tools(source: str | None) -> bool:
    return bool(source) and "tools" in str(source)


def preamble(functions: Sequence[Mapping[str, Any]]) -> str:
    lines = "\n".join(json.dumps({"type": "function", "function": dict(f)}) for f in functions)
    return PREAMBLE.format(tools=lines)


def _call_text(call: Mapping[str, Any]) -> str:
    function = call.get("function") or {}
    raw = function.get("arguments") or "{}"
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        arguments = raw
    body = json.dumps({"name": function.get("name"), "arguments": arguments})
    return f"{TOOL_CALL_OPEN}{body}{TOOL_CALL_CLOSE}"


def with_preamble(
    messages: Sequence[Mapping[str, Any]], functions: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Plain role/content messages for a template without tool syntax."""
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}  # tool_call_id -> the function it called
    for m in messages:
        role, content = m["role"], str(m.get("content") or "")
        if role == "assistant" and m.get("tool_calls"):
            for c in m["tool_calls"]:
                names[str(c.get("id"))] = str((c.get("function") or {}).get("name"))
            calls = "\n".join(_call_text(c) for c in m["tool_calls"])
            out.append({"role": "assistant", "content": (content + "\n" + calls).strip()})
        elif role == "tool":
            name = names.get(str(m.get("tool_call_id")), "the function")
            out.append({"role": "user", "content": TOOL_RESULT.format(name=name, result=content)})
        else:
            out.append({"role": role, "content": content})
    if functions:
        text = preamble(functions)
        if out and out[0]["role"] in ("system", "developer"):
            out[0] = {**out[0], "content": out[0]["content"] + "\n\n" + text}
        else:
            out.insert(0, {"role": "system", "content": text})
    return out


def parse_calls(text: str, names: Sequence[str]) -> tuple[str, list[ToolCall]]:
    """(content before the first call, the calls) from an answer; no valid call: (text, [])."""
    start = text.find(TOOL_CALL_START)
    if start == -1:
        return text, []
    calls = []
    for match in _CALL.finditer(text, start):
        try:
            parsed = json.loads(match.group(1))
        except ValueError:
            continue
        if not isinstance(parsed, dict) or parsed.get("name") not in names:
            continue
        arguments = parsed.get("arguments", {})
        calls.append(
            ToolCall(
                id=f"call_{uuid.uuid4().hex[:24]}",
                name=str(parsed["name"]),
                arguments=json.dumps(arguments),
            )
        )
    if not calls:
        return text, []
    return text[:start].strip(), calls


def may_become_call(text: str) -> bool:
    """Could this start of an answer still turn into a tool call (hold it back)?"""
    head = text.lstrip()
    return TOOL_CALL_START.startswith(head) or head.startswith(TOOL_CALL_START)
