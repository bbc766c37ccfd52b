"""The OpenAI shapes of an answer's choices: messages, tool calls, log-probs, chunks.

Pure formatting (no HTTP): the route (api/routes/openai.py) sends what these build.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tracker_service.gateway.answer import Piece
from tracker_service.gateway.sampler import TokenLogprob
from tracker_service.gateway.tools import TOOL_CALL_START, ToolCall, may_become_call, parse_calls

TokenText = Callable[[int], str]


def _entry(token_id: int, logprob: float, text: TokenText) -> dict[str, Any]:
    token = text(token_id)
    return {"token": token, "logprob": logprob, "bytes": list(token.encode("utf-8"))}


def chat_logprobs(tokens: Sequence[TokenLogprob], text: TokenText) -> dict[str, Any]:
    return {
        "content": [
            {
                **_entry(t.token_id, t.logprob, text),
                "top_logprobs": [_entry(i, lp, text) for i, lp in t.top],
            }
            for t in tokens
        ],
        "refusal": None,
    }


def completion_logprobs(
    tokens: Sequence[TokenLogprob], text: TokenText, offset: int = 0
) -> dict[str, Any]:
    """The legacy shape: parallel lists, and each token's character offset in the text."""
    offsets, strings = [], []
    for t in tokens:
        offsets.append(offset)
        strings.append(text(t.token_id))
        offset += len(strings[-1])
    return {
        "tokens": strings,
        "token_logprobs": [t.logprob for t in tokens],
        "top_logprobs": [{text(i): lp for i, lp in t.top} for t in tokens],
        "text_offset": offsets,
    }


def message(text: str, functions: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], bool]:
    """The assistant message for a whole answer, and whether it is tool calls."""
    calls: list[ToolCall] = []
    if functions:
        text, calls = parse_calls(text, [f["name"] for f in functions])
    out: dict[str, Any] = {"role": "assistant", "content": text if not calls else (text or None)}
    if calls:
        out["tool_calls"] = [c.to_json() for c in calls]
    return out, bool(calls)


@dataclass
class ChatStreamChoice:
    """One choice's streamed deltas; with tools offered, a call is held until it is whole
    and then sent as ``delta.tool_calls`` (arguments in one piece)."""

    index: int
    functions: Sequence[dict[str, Any]]
    text: TokenText
    logprobs: bool
    _held: str = ""
    _held_logprobs: list[TokenLogprob] = field(default_factory=list)
    _deciding: bool = True
    called: bool = False

    def _delta(self, delta: dict[str, Any], tokens: Sequence[TokenLogprob]) -> dict[str, Any]:
        choice: dict[str, Any] = {"index": self.index, "delta": delta, "finish_reason": None}
        if self.logprobs:
            choice["logprobs"] = chat_logprobs(tokens, self.text) if tokens else None
        return choice

    def first(self) -> dict[str, Any]:
        return self._delta({"role": "assistant", "content": ""}, [])

    def push(self, piece: Piece) -> list[dict[str, Any]]:
        if not self.functions or not self._deciding:
            return [self._delta({"content": piece.text}, piece.logprobs)]
        self._held += piece.text
        self._held_logprobs += piece.logprobs
        if may_become_call(self._held):
            return []  # a call's start, or perhaps one: wait
        self._deciding = False
        return self._release()

    def _release(self) -> list[dict[str, Any]]:
        held, tokens = self._held, self._held_logprobs
        self._held, self._held_logprobs = "", []
        if not held and not tokens:
            return []
        return [self._delta({"content": held}, tokens)]

    def finish(self, reason: str | None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if self._deciding and self._held.lstrip().startswith(TOOL_CALL_START):
            content, calls = parse_calls(self._held, [f["name"] for f in self.functions])
            if calls:
                self.called = True
                if content:
                    out.append(self._delta({"content": content}, []))
                for i, call in enumerate(calls):
                    tokens = self._held_logprobs if i == 0 else []
                    out.append(self._delta({"tool_calls": [call.to_json(i)]}, tokens))
                self._held, self._held_logprobs = "", []
        out += self._release()
        final = {"index": self.index, "delta": {}, "finish_reason": reason}
        if self.called:
            final["finish_reason"] = "tool_calls"
        if self.logprobs:
            final["logprobs"] = None
        return [*out, final]
