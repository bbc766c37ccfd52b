"""Each face's request becomes the one internal request: the same conversation (with a
tool call and its result) through Responses, Messages and Ollama gives the same chat
messages, tools and format as chat completions would get."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tracker_service.errors import BadRequest
from tracker_service.gateway.faces import anthropic_messages, ollama, openai_responses
from tracker_service.gateway.openai_schemas import ChatCompletionCreate

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
RESULT = '{"sky": "sunny"}'
TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}


def template_messages(request: ChatCompletionCreate) -> list[dict[str, Any]]:
    """What the chat template renders (call ids aside: each API names them its own way)."""
    out = []
    for m in request.messages:
        message = m.to_template()
        for call in message.get("tool_calls") or []:
            call["id"] = "-"
            call["function"]["arguments"] = json.loads(call["function"]["arguments"])
        if "tool_call_id" in message:
            message["tool_call_id"] = "-"
        out.append(message)
    return out


def test_a_tool_loop_is_the_same_internal_request_through_every_api() -> None:
    chat = ChatCompletionCreate.model_validate({
        "model": "m", "max_tokens": 20,
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": RESULT},
        ],
        "tools": [TOOL],
    })  # fmt: skip
    responses, _ = openai_responses.to_internal(
        openai_responses.ResponseCreate.model_validate({
            "model": "m", "max_output_tokens": 20, "instructions": "Be brief.",
            "input": [
                {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
                {"type": "function_call", "call_id": "call_9", "name": "get_weather",
                 "arguments": '{"city": "Paris"}'},
                {"type": "function_call_output", "call_id": "call_9", "output": RESULT},
            ],
            "tools": [{"type": "function", "name": "get_weather", "parameters": SCHEMA}],
        }),
        [],
    )  # fmt: skip
    messages = anthropic_messages.to_internal(
        anthropic_messages.MessageCreate.model_validate({
            "model": "m", "max_tokens": 20, "system": "Be brief.",
            "messages": [
                {"role": "user", "content": "Weather in Paris?"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1",
                 "name": "get_weather", "input": {"city": "Paris"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                 "content": RESULT}]},
            ],
            "tools": [{"name": "get_weather", "input_schema": SCHEMA}],
        })
    )  # fmt: skip
    chat_ollama = ollama.chat_internal(
        ollama.ChatRequest.model_validate({
            "model": "m:latest", "options": {"num_predict": 20},
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather in Paris?"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
                {"role": "tool", "content": RESULT, "tool_name": "get_weather"},
            ],
            "tools": [TOOL],
        })
    )  # fmt: skip
    for other in (responses, messages, chat_ollama):
        assert other.model == "m"
        assert template_messages(other) == template_messages(chat)
        assert other.functions == chat.functions
        assert other.token_limit == 20


def test_formats_and_forced_tools_map_onto_the_internal_grammar_fields() -> None:
    fmt = {"type": "json_schema", "name": "city", "schema": SCHEMA, "strict": True}
    request, _ = openai_responses.to_internal(
        openai_responses.ResponseCreate(model="m", input="x", text={"format": fmt}), []
    )
    assert request.response_format is not None
    assert request.response_format.json_schema is not None
    assert request.response_format.json_schema.schema_ == SCHEMA
    forced = anthropic_messages.to_internal(
        anthropic_messages.MessageCreate.model_validate({
            "model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}],
            "tools": [{"name": "f", "input_schema": SCHEMA}],
            "tool_choice": {"type": "tool", "name": "f"},
        })
    )  # fmt: skip
    assert [f["name"] for f in forced.forced_functions] == ["f"]
    structured = ollama.chat_internal(
        ollama.ChatRequest(model="m", messages=[{"role": "user", "content": "x"}], format=SCHEMA)
    )
    assert (
        structured.response_format is not None and structured.response_format.type == "json_schema"
    )
    assert (
        ollama.chat_internal(
            ollama.ChatRequest(
                model="m", messages=[{"role": "user", "content": "x"}], format="json"
            )
        ).response_format.type
        == "json_object"
    )  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("build", "param"),
    [
        (lambda: openai_responses.to_internal(openai_responses.ResponseCreate.model_validate(
            {"model": "m", "input": "x", "background": True}), []), "background"),
        (lambda: openai_responses.to_internal(openai_responses.ResponseCreate.model_validate(
            {"model": "m", "input": [{"type": "reasoning", "summary": []}]}), []), "input[0].type"),
        (lambda: anthropic_messages.to_internal(anthropic_messages.MessageCreate.model_validate(
            {"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "x"}],
             "tools": [{"type": "web_search_20250305", "name": "web_search"}]})), "tools[0]"),
        (lambda: ollama.generate_internal(ollama.GenerateRequest.model_validate(
            {"model": "m", "prompt": "x", "template": "{{ .Prompt }}"})), "template"),
        (lambda: ollama.chat_internal(ollama.ChatRequest.model_validate(
            {"model": "m", "messages": [{"role": "user", "content": "x", "images": ["aGk="]}]})),
         "messages[0].images"),
    ],
)  # fmt: skip
def test_what_a_face_cannot_honour_is_a_400_naming_the_field(build: Any, param: str) -> None:
    with pytest.raises(BadRequest) as caught:
        build()
    assert caught.value.param == param
    assert param in caught.value.message


def test_ollama_runtime_options_are_ignored_and_defaults_are_ollamas() -> None:
    request = ollama.chat_internal(
        ollama.ChatRequest.model_validate({
            "model": "m", "messages": [{"role": "user", "content": "x"}],
            "options": {"num_ctx": 8192, "num_predict": -1, "top_k": 5, "seed": 3},
        })
    )  # fmt: skip
    assert request.temperature == ollama.DEFAULT_TEMPERATURE
    assert request.token_limit is None and request.top_k == 5 and request.seed == 3
    assert request.stream  # Ollama streams unless told not to
