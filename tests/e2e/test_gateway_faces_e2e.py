"""The gateway's other faces on real processes (a tracker, two node processes on the
default model), driven by their official clients:

- ``openai``: ``responses.create`` whole and streamed (greedy = chat completions), a
  forced function tool whose arguments validate, its result sent back through
  ``previous_response_id``, a strict ``json_schema`` format validated by ``jsonschema``;
- ``anthropic``: ``messages.create`` and ``messages.stream`` (greedy = chat
  completions), a forced ``tool_use`` whose input validates, ``count_tokens``;
- ``ollama``: ``chat`` and ``generate`` (greedy = chat completions), ``list``, ``show``,
  structured output with a schema, a tool call.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import jsonschema
import ollama
import openai
import pytest

from tests.e2e.conftest import Cluster
from tests.e2e.test_gateway_api_fields_e2e import PERSON, WEATHER_TOOL, served

pytestmark = pytest.mark.slow
__all__ = ["served"]  # the module fixture (the openai client and the model's name)

QUESTION = "Name three colours."
TOKENS = 24
WEATHER = WEATHER_TOOL["function"]  # name, description, parameters
WEATHER_SCHEMA: dict[str, Any] = WEATHER["parameters"]  # type: ignore[assignment]
Served = tuple[openai.OpenAI, str]


def chat_greedy(served: Served, content: str = QUESTION, **kw: Any) -> Any:
    client, model = served
    return client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": content}],
        temperature=0,
        max_tokens=TOKENS,
        **kw,
    )


def claude(cluster: Cluster) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=cluster.url, api_key="unused", max_retries=0)


def test_responses_greedy_equals_chat_completions_whole_and_streamed(served: Served) -> None:
    client, model = served
    expected = chat_greedy(served)
    text = expected.choices[0].message.content
    whole = client.responses.create(
        model=model, input=QUESTION, temperature=0, max_output_tokens=TOKENS
    )
    assert whole.output_text == text
    assert whole.usage is not None and whole.usage.input_tokens == expected.usage.prompt_tokens
    kinds, deltas, final = [], "", None
    for event in client.responses.create(
        model=model, input=QUESTION, temperature=0, max_output_tokens=TOKENS, stream=True
    ):
        kinds.append(event.type)
        if event.type == "response.output_text.delta":
            deltas += event.delta
        if event.type in ("response.completed", "response.incomplete"):
            final = event.response
    assert kinds[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert deltas == text
    assert final is not None and final.output_text == text


def test_responses_forced_function_tool_then_its_result_via_previous_response_id(
    served: Served,
) -> None:
    client, model = served
    tool = {"type": "function", "strict": True, **WEATHER}
    first = client.responses.create(
        model=model,
        input="What is the weather in Paris?",
        tools=[tool],  # type: ignore[list-item]
        tool_choice={"type": "function", "name": "get_weather"},
        max_output_tokens=60,
        temperature=0,
    )
    (call,) = [item for item in first.output if item.type == "function_call"]
    assert call.name == "get_weather"
    jsonschema.validate(json.loads(call.arguments), WEATHER_SCHEMA)
    second = client.responses.create(
        model=model,
        previous_response_id=first.id,
        input=[
            {
                "type": "function_call_output",
                "call_id": call.call_id,
                "output": '{"temperature_c": 21, "sky": "sunny"}',
            }
        ],
        tools=[tool],  # type: ignore[list-item]
        tool_choice="none",
        temperature=0,
        max_output_tokens=40,
    )
    assert second.output_text
    assert "sunny" in second.output_text.lower() or "21" in second.output_text  # it used it

    events = list(client.responses.create(
        model=model, input="What is the weather in Rome?", tools=[tool],  # type: ignore[list-item]
        tool_choice="required", max_output_tokens=60, stream=True, temperature=0,
    ))  # fmt: skip
    kinds = [e.type for e in events]
    assert "response.function_call_arguments.delta" in kinds
    assert kinds[-1] == "response.completed"
    done = next(e for e in events if e.type == "response.function_call_arguments.done")
    jsonschema.validate(json.loads(done.arguments), WEATHER_SCHEMA)


def test_responses_json_schema_format_validates(served: Served) -> None:
    client, model = served
    for who in ("a baker in Lyon", "a pilot from Oslo"):
        reply = client.responses.create(
            model=model,
            input=f"Invent {who}: give name, age and city as JSON.",
            text={"format": {"type": "json_schema", "name": "person", "schema": PERSON,
                             "strict": True}},
            max_output_tokens=80,
            temperature=0,
        )  # fmt: skip
        jsonschema.validate(json.loads(reply.output_text), PERSON)


def test_anthropic_create_and_stream_equal_chat_completions(
    served: Served, cluster: Cluster
) -> None:
    _, model = served
    expected = chat_greedy(served)
    text = expected.choices[0].message.content
    messages: Any = [{"role": "user", "content": QUESTION}]
    greedy = {"temperature": 0}  # this client version passes it as an extra field
    message = claude(cluster).messages.create(
        model=model, max_tokens=TOKENS, messages=messages, extra_body=greedy
    )
    assert [b.type for b in message.content] == ["text"]
    assert message.content[0].text == text  # type: ignore[union-attr]
    assert message.usage.input_tokens == expected.usage.prompt_tokens
    with claude(cluster).messages.stream(
        model=model, max_tokens=TOKENS, messages=messages, extra_body=greedy
    ) as stream:
        streamed = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert streamed == text
    assert final.stop_reason == message.stop_reason
    counted = claude(cluster).messages.count_tokens(model=model, messages=messages)
    assert counted.input_tokens == expected.usage.prompt_tokens


def test_anthropic_forced_tool_use_input_validates(served: Served, cluster: Cluster) -> None:
    _, model = served
    tool = {"name": "get_weather", "description": WEATHER["description"],
            "input_schema": WEATHER_SCHEMA}  # fmt: skip
    message = claude(cluster).messages.create(
        model=model,
        max_tokens=60,
        extra_body={"temperature": 0},
        tools=[tool],  # type: ignore[list-item]
        tool_choice={"type": "tool", "name": "get_weather"},
        messages=[{"role": "user", "content": "What is the weather in Paris?"}],
    )
    assert message.stop_reason == "tool_use"
    (use,) = [b for b in message.content if b.type == "tool_use"]
    assert use.name == "get_weather"  # type: ignore[union-attr]
    jsonschema.validate(use.input, WEATHER_SCHEMA)  # type: ignore[union-attr]
    answer = claude(cluster).messages.create(
        model=model,
        max_tokens=40,
        tools=[tool],  # type: ignore[list-item]
        tool_choice={"type": "none"},
        messages=[
            {"role": "user", "content": "What is the weather in Paris?"},
            {"role": "assistant", "content": message.content},  # type: ignore[typeddict-item]
            {"role": "user", "content": [{
                "type": "tool_result", "tool_use_id": use.id,  # type: ignore[union-attr]
                "content": '{"temperature_c": 21, "sky": "sunny"}',
            }]},
        ],
        extra_body={"temperature": 0},
    )  # fmt: skip
    text = answer.content[0].text  # type: ignore[union-attr]
    assert answer.stop_reason in ("end_turn", "max_tokens")
    assert "sunny" in text.lower() or "21" in text  # it read the result
    with claude(cluster).messages.stream(
        model=model, max_tokens=60, extra_body={"temperature": 0}, tools=[tool],  # type: ignore[list-item]
        tool_choice={"type": "any"},
        messages=[{"role": "user", "content": "What is the weather in Rome?"}],
    ) as stream:  # fmt: skip
        final = stream.get_final_message()
    (streamed,) = [b for b in final.content if b.type == "tool_use"]
    jsonschema.validate(streamed.input, WEATHER_SCHEMA)  # type: ignore[union-attr]


def test_ollama_chat_generate_list_show_equal_chat_completions(
    served: Served, cluster: Cluster
) -> None:
    _, model = served
    expected = chat_greedy(served)
    text = expected.choices[0].message.content
    client = ollama.Client(host=cluster.url)
    options = {"temperature": 0, "num_predict": TOKENS}
    messages = [{"role": "user", "content": QUESTION}]
    assert client.chat(model=model, messages=messages, options=options).message.content == text
    streamed = "".join(
        part.message.content or ""
        for part in client.chat(model=model, messages=messages, options=options, stream=True)
    )
    assert streamed == text
    assert client.generate(model=model, prompt=QUESTION, options=options).response == text
    assert model in [m.model for m in client.list().models]
    shown = client.show(model)
    assert shown.template and "tools" in (shown.capabilities or [])


def test_ollama_structured_output_and_a_tool_call(served: Served, cluster: Cluster) -> None:
    _, model = served
    client = ollama.Client(host=cluster.url)
    reply = client.chat(
        model=model,
        messages=[{"role": "user", "content": "Invent a person: name, age and city."}],
        format=PERSON,
        options={"num_predict": 80, "temperature": 0},
    )
    jsonschema.validate(json.loads(reply.message.content or ""), PERSON)
    # Ollama has no tool_choice: the model decides. One earlier turn in Ollama's own
    # tool_calls form shows this small model what a call looks like (greedy, it follows).
    earlier = {"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "get_weather", "arguments": {"city": "Rome"}}}
    ]}  # fmt: skip
    question = [
        {"role": "user", "content": "Weather in Rome?"},
        earlier,
        {"role": "user", "content": "Weather in Paris?"},
    ]
    called = client.chat(
        model=model, messages=question, tools=[WEATHER_TOOL], options={"temperature": 0}
    )
    (call,) = called.message.tool_calls or []
    assert call.function.name == "get_weather"
    jsonschema.validate(dict(call.function.arguments), WEATHER_SCHEMA)
    follow = client.chat(
        model=model,
        messages=[
            *question,
            called.message,
            {
                "role": "tool",
                "content": '{"temperature_c": 21, "sky": "sunny"}',
                "tool_name": "get_weather",
            },
        ],
        options={"temperature": 0, "num_predict": 40},
    )
    assert follow.message.content and not follow.message.tool_calls
