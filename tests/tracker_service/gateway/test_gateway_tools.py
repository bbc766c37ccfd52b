"""Tools in the prompt and tool calls out of the answer (gateway/tools.py), and how a
streamed choice holds a call back until it is whole (gateway/responses.py)."""

from __future__ import annotations

import json

from tracker_service.gateway.answer import Piece
from tracker_service.gateway.chat_template import ChatTemplate
from tracker_service.gateway.responses import ChatStreamChoice, message
from tracker_service.gateway.tools import parse_calls, with_preamble

WEATHER = {
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def test_the_preamble_lists_the_tools_and_earlier_calls_and_results_render_as_text() -> None:
    messages = [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"sky": "sunny"}'},
    ]
    plain = with_preamble(messages, [WEATHER])
    assert plain[0]["role"] == "system" and '"name": "get_weather"' in plain[0]["content"]
    assert plain[2] == {"role": "assistant", "content": CALL}
    assert plain[3]["role"] == "user" and '{"sky": "sunny"}' in plain[3]["content"]
    assert "get_weather returned" in plain[3]["content"]
    template = ChatTemplate(
        "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}{% endfor %}"
    )
    assert "<assistant><tool_call>" in template.render(plain)


def test_calls_are_parsed_and_anything_else_stays_content() -> None:
    content, calls = parse_calls("Let me look.\n" + CALL, ["get_weather"])
    assert content == "Let me look." and [c.name for c in calls] == ["get_weather"]
    assert json.loads(calls[0].arguments) == {"city": "Paris"}
    assert parse_calls(CALL, ["other"]) == (CALL, [])  # not an offered function
    assert parse_calls("<tool_call>{broken", ["get_weather"]) == ("<tool_call>{broken", [])
    msg, called = message(CALL, [WEATHER])
    assert called and msg["content"] is None and msg["tool_calls"][0]["type"] == "function"


def stream(pieces: list[str]) -> list[dict]:
    choice = ChatStreamChoice(0, [WEATHER], str, logprobs=False)
    out = []
    for text in pieces:
        out += choice.push(Piece(text, []))
    return out + choice.finish("stop")


def test_a_streamed_call_is_held_until_whole_then_sent_as_tool_calls() -> None:
    parts = stream(
        ["<tool", "_call>\n", '{"name": "get_weather", ', '"arguments": {}}\n</tool_call>']
    )
    assert [p["delta"] for p in parts[:-1]] == [
        {"tool_calls": [parts[0]["delta"]["tool_calls"][0]]}
    ]
    call = parts[0]["delta"]["tool_calls"][0]
    assert call["index"] == 0 and call["function"]["name"] == "get_weather"
    assert parts[-1]["finish_reason"] == "tool_calls"


def test_streamed_content_that_is_no_call_is_released() -> None:
    parts = stream(["<to", "day is sunny", "!"])
    assert [p["delta"].get("content") for p in parts[:-1]] == ["<today is sunny", "!"]
    assert parts[-1]["finish_reason"] == "stop"
