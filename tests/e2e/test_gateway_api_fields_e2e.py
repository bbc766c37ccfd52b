"""The gateway's agent-facing fields on real processes (a tracker, two node processes
on the default model), driven by the official ``openai`` client:

- ``logprobs``/``top_logprobs`` consistent with the sampled tokens (chat and
  completions, streamed too); ``seed`` repeatable; ``logit_bias`` takes effect;
- ``n=3`` gives three choices (streamed too);
- ``response_format`` ``json_schema`` (strict) and ``json_object``: every answer parses
  and validates over several prompts (streamed too);
- a tool-calling loop: the model calls a function, gets its result, answers; a
  forced call streamed as ``delta.tool_calls``;
- fields the gateway does not honour are a 400 naming the field;
- LangChain's ``ChatOpenAI`` (an agent framework from PyPI) runs a tool-using task.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import jsonschema
import openai
import pytest
from tokenizers import Tokenizer

from tests.e2e.conftest import Cluster

pytestmark = pytest.mark.slow

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 40},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "city": {"type": "string", "maxLength": 40},
    },
    "required": ["name", "age", "city"],
    "additionalProperties": False,
}
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "maxLength": 40}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}


@pytest.fixture(scope="module")
def served(cluster: Cluster) -> tuple[openai.OpenAI, str]:
    client = openai.OpenAI(base_url=cluster.url + "/v1", api_key="unused", max_retries=0)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        models = [m.id for m in client.models.list().data]
        if models:
            return client, models[0]
        time.sleep(0.5)
    raise AssertionError("no model came to serve")


def chat(served: tuple[openai.OpenAI, str], content: str, **kw: Any) -> Any:
    client, model = served
    return client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": content}], **kw
    )


def test_chat_logprobs_are_the_sampled_tokens_and_greedy_picks_the_top_one(
    served: tuple[openai.OpenAI, str],
) -> None:
    plain = chat(served, "Name three colours.", temperature=0, max_tokens=16)
    reply = chat(
        served, "Name three colours.", temperature=0, max_tokens=16, logprobs=True, top_logprobs=5
    )
    choice = reply.choices[0]
    assert choice.message.content == plain.choices[0].message.content  # same greedy answer
    entries = choice.logprobs.content
    assert "".join(e.token for e in entries) == choice.message.content
    stop_token = 1 if choice.finish_reason == "stop" else 0
    assert len(entries) + stop_token == reply.usage.completion_tokens
    for entry in entries:
        assert len(entry.top_logprobs) == 5
        values = [t.logprob for t in entry.top_logprobs]
        assert values == sorted(values, reverse=True) and all(v <= 0 for v in values)
        assert entry.token == entry.top_logprobs[0].token  # greedy: the most likely one
        assert entry.logprob == pytest.approx(values[0])
    # The nodes' prefix caches may hold this prompt from an earlier test (whole 16-token
    # blocks, and never the last position, which is always computed).
    cached = reply.usage.prompt_tokens_details.cached_tokens
    assert 0 <= cached < reply.usage.prompt_tokens and cached % 16 == 0
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens

    stream = chat(
        served,
        "Name three colours.",
        temperature=0,
        max_tokens=16,
        logprobs=True,
        top_logprobs=2,
        stream=True,
        stream_options={"include_usage": True},
    )
    text, streamed, usage = "", [], None
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        for c in chunk.choices:
            text += c.delta.content or ""
            if c.logprobs and c.logprobs.content:
                streamed += c.logprobs.content
    assert text == choice.message.content
    assert [e.token for e in streamed] == [e.token for e in entries]
    assert all(len(e.top_logprobs) == 2 for e in streamed)
    assert usage is not None and usage.completion_tokens == reply.usage.completion_tokens


def test_sampled_logprobs_match_the_drawn_token_and_a_seed_repeats(
    served: tuple[openai.OpenAI, str],
) -> None:
    kw: dict[str, Any] = {"temperature": 1.0, "max_tokens": 12, "seed": 11, "logprobs": True}
    first = chat(served, "Write a short poem.", top_logprobs=20, **kw)
    again = chat(served, "Write a short poem.", top_logprobs=20, **kw)
    assert first.choices[0].message.content == again.choices[0].message.content
    for entry in first.choices[0].logprobs.content:
        alternatives = {t.token: t.logprob for t in entry.top_logprobs}
        assert entry.token in alternatives  # drawn from the top 20, its own log-prob
        assert entry.logprob == pytest.approx(alternatives[entry.token])


def test_completions_logprobs_line_up_with_the_text(served: tuple[openai.OpenAI, str]) -> None:
    client, model = served
    reply = client.completions.create(
        model=model, prompt="The capital of France is", max_tokens=8, temperature=0, logprobs=3
    )
    choice = reply.choices[0]
    lp = choice.logprobs
    assert "".join(lp.tokens) == choice.text
    assert len(lp.token_logprobs) == len(lp.tokens) == len(lp.top_logprobs)
    assert lp.text_offset[0] == 0
    assert all(
        len(top) <= 3 and tok in top for tok, top in zip(lp.tokens, lp.top_logprobs, strict=True)
    )
    streamed = client.completions.create(
        model=model,
        prompt="The capital of France is",
        max_tokens=8,
        temperature=0,
        logprobs=3,
        stream=True,
    )
    tokens: list[str] = []
    for chunk in streamed:
        if chunk.choices and chunk.choices[0].logprobs:
            tokens += chunk.choices[0].logprobs.tokens
    assert tokens == lp.tokens


def test_logit_bias_bans_the_greedy_first_token(
    cluster: Cluster, served: tuple[openai.OpenAI, str]
) -> None:
    client, model = served
    prompt = "The capital of France is"
    base = client.completions.create(model=model, prompt=prompt, max_tokens=1, temperature=0)
    tokenizer = Tokenizer.from_file(str(cluster.model_dir / "tokenizer.json"))
    (token_id,) = tokenizer.encode(base.choices[0].text, add_special_tokens=False).ids
    banned = client.completions.create(
        model=model,
        prompt=prompt,
        max_tokens=1,
        temperature=0,
        logit_bias={str(token_id): -100},
    )
    assert banned.choices[0].text != base.choices[0].text


def test_n_three_gives_three_choices_streamed_too(served: tuple[openai.OpenAI, str]) -> None:
    reply = chat(served, "Say something.", n=3, temperature=1.0, max_tokens=10, seed=3)
    assert [c.index for c in reply.choices] == [0, 1, 2]
    assert all(c.message.content and c.finish_reason for c in reply.choices)
    assert 3 <= reply.usage.completion_tokens <= 30  # the three choices' tokens together
    greedy = chat(served, "Say something.", n=3, temperature=0, max_tokens=10)
    assert len({c.message.content for c in greedy.choices}) == 1  # greedy: all alike

    stream = chat(served, "Say something.", n=3, temperature=1.0, max_tokens=10, stream=True)
    texts = ["", "", ""]
    finished = set()
    for chunk in stream:
        for c in chunk.choices:
            texts[c.index] += c.delta.content or ""
            if c.finish_reason:
                finished.add(c.index)
    assert finished == {0, 1, 2}
    assert all(texts)


PROMPTS = [
    "Describe a person who lives in Paris as JSON.",
    "Give me a JSON record for a fictional teacher.",
    "Invent a character and give their name, age and city in JSON.",
    "Output JSON about a scientist.",
    "My neighbour is Tom, 42, from Leeds. Reply with JSON.",
]


def test_json_schema_answers_always_validate(served: tuple[openai.OpenAI, str]) -> None:
    fmt = {
        "type": "json_schema",
        "json_schema": {"name": "person", "schema": PERSON, "strict": True},
    }
    for index, prompt in enumerate(PROMPTS):
        reply = chat(
            served, prompt, response_format=fmt, max_tokens=120, temperature=0.7, seed=index
        )
        assert reply.choices[0].finish_reason == "stop", reply.choices[0].message.content
        jsonschema.validate(json.loads(reply.choices[0].message.content), PERSON)
    stream = chat(served, PROMPTS[0], response_format=fmt, max_tokens=120, stream=True)
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    jsonschema.validate(json.loads(text), PERSON)


def test_json_object_answers_parse(served: tuple[openai.OpenAI, str]) -> None:
    for prompt in PROMPTS[:3]:
        reply = chat(
            served, prompt, response_format={"type": "json_object"}, max_tokens=120, temperature=0
        )
        # A budget too small for what the model starts is steered shut (sampler.py).
        assert reply.choices[0].finish_reason == "stop"
        assert isinstance(json.loads(reply.choices[0].message.content), dict)


def test_a_tool_calling_loop(served: tuple[openai.OpenAI, str]) -> None:
    client, model = served
    messages: list[Any] = [{"role": "user", "content": "What is the weather in Paris?"}]
    first = client.chat.completions.create(
        model=model, messages=messages, tools=[WEATHER_TOOL], tool_choice="required", max_tokens=60
    )
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls
    assert call.function.name == "get_weather"
    arguments = json.loads(call.function.arguments)
    jsonschema.validate(arguments, WEATHER_TOOL["function"]["parameters"])  # type: ignore[index]
    messages.append(choice.message.model_dump(exclude_none=True))
    messages.append(
        {
            "role": "tool",
            "tool_call_id": call.id,
            "content": '{"temperature_c": 21, "sky": "sunny"}',
        }
    )
    second = client.chat.completions.create(
        model=model,
        messages=messages,
        tools=[WEATHER_TOOL],
        tool_choice="none",
        max_tokens=40,
        temperature=0,
    )
    answer = second.choices[0].message
    assert answer.tool_calls is None and answer.content
    assert "sunny" in answer.content.lower() or "21" in answer.content  # it used the result


def test_a_named_tool_call_streams_as_delta_tool_calls(
    served: tuple[openai.OpenAI, str],
) -> None:
    other = {
        "type": "function",
        "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}},
    }
    stream = chat(
        served,
        "What is the weather in Rome?",
        tools=[other, WEATHER_TOOL],
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
        max_tokens=60,
        stream=True,
    )
    name, arguments, finish = "", "", None
    for chunk in stream:
        for c in chunk.choices:
            for tc in c.delta.tool_calls or []:
                name += tc.function.name or ""
                arguments += tc.function.arguments or ""
            finish = c.finish_reason or finish
    assert name == "get_weather" and finish == "tool_calls"
    jsonschema.validate(json.loads(arguments), WEATHER_TOOL["function"]["parameters"])  # type: ignore[index]


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"n": 9}, "n"),
        ({"logit_bias": {"999999": 5}}, "logit_bias"),
        ({"top_logprobs": 21, "logprobs": True}, "top_logprobs"),
        ({"audio": {}}, "audio"),
    ],
)
def test_fields_it_does_not_honour_are_a_400_naming_them(
    cluster: Cluster, served: tuple[openai.OpenAI, str], extra: dict[str, Any], param: str
) -> None:
    body = {"model": served[1], "messages": [{"role": "user", "content": "hi"}], **extra}
    reply = httpx.post(cluster.url + "/v1/chat/completions", json=body, timeout=30)
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == param


def test_langchain_chat_openai_runs_a_tool_using_task(served: tuple[openai.OpenAI, str]) -> None:
    langchain_openai = pytest.importorskip("langchain_openai")
    from langchain_core.messages import BaseMessage, HumanMessage
    from langchain_core.tools import tool

    asked: list[str] = []

    @tool
    def get_weather(city: str) -> str:
        """The current weather in a city."""
        asked.append(city)
        return json.dumps({"city": city, "temperature_c": 21, "sky": "sunny"})

    client, model = served
    llm = langchain_openai.ChatOpenAI(
        model=model,
        base_url=str(client.base_url),
        api_key="unused",
        temperature=0,
        max_tokens=60,
        max_retries=0,
    )
    messages: list[BaseMessage] = [HumanMessage("What is the weather in Paris?")]
    call = llm.bind_tools([get_weather], tool_choice="any").invoke(messages)
    assert [c["name"] for c in call.tool_calls] == ["get_weather"]
    messages.append(call)
    messages += [get_weather.invoke(c) for c in call.tool_calls]
    assert asked and asked[0]
    final = llm.bind_tools([get_weather], tool_choice="none").invoke(messages)
    assert not final.tool_calls
    assert "sunny" in str(final.content).lower() or "21" in str(final.content)

    chunks = list(
        llm.bind_tools([get_weather], tool_choice="get_weather").stream(
            [HumanMessage("What is the weather in Oslo?")]
        )
    )
    merged = chunks[0]
    for chunk in chunks[1:]:
        merged += chunk
    assert [c["name"] for c in merged.tool_calls] == ["get_weather"]
    assert isinstance(merged.tool_calls[0]["args"]["city"], str)
