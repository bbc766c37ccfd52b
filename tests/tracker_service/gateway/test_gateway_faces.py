"""The Responses, Messages and Ollama faces on a real tracker with real node data planes
(a tiny Llama): each answers what chat completions answers, streams its documented
event sequence, counts in /metrics, and refuses in its own error shape.

The official clients and the default model drive them in tests/e2e/test_gateway_faces_e2e.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import ollama
import openai
import pytest

from tests.support.waiting import wait_until
from tests.tracker_service.gateway.test_gateway import QUESTION, chat_model, client_for, cluster
from tests.tracker_service.gateway.test_gateway_keys import add_key, db_url
from tests.tracker_service.gateway_cluster import MODEL, GatewayCluster, identity
from tests.tracker_service.real_nodes import start_real_node
from tracker_service.cli.commands import main

__all__ = ["chat_model", "cluster"]  # module fixtures, shared with test_gateway.py
TOKENS = 10


def chat_answer(cluster: GatewayCluster, content: str = QUESTION, **kw: Any) -> Any:
    return client_for(cluster).chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": content}],
        temperature=0,
        max_tokens=TOKENS,
        **kw,
    )


def sse_events(reply: httpx.Response) -> list[tuple[str, dict[str, Any]]]:
    """(event name, data) of a named server-sent event stream."""
    out, name = [], ""
    for line in reply.iter_lines():
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            out.append((name, json.loads(line.removeprefix("data: "))))
    return out


def post_stream(cluster: GatewayCluster, path: str, body: dict[str, Any]) -> list[Any]:
    with cluster.http() as http, http.stream("POST", path, json=body) as reply:
        assert reply.status_code == 200, reply.read()
        if path.startswith("/api/"):
            return [json.loads(line) for line in reply.iter_lines() if line]
        return sse_events(reply)


def test_responses_answer_equals_chat_completions_whole_and_streamed(
    cluster: GatewayCluster,
) -> None:
    expected = chat_answer(cluster)
    client = client_for(cluster)
    whole = client.responses.create(
        model=MODEL, input=QUESTION, temperature=0, max_output_tokens=TOKENS
    )
    assert whole.output_text == expected.choices[0].message.content
    assert whole.usage is not None
    assert whole.usage.input_tokens == expected.usage.prompt_tokens
    assert whole.usage.output_tokens == expected.usage.completion_tokens
    assert whole.status == (
        "incomplete" if expected.choices[0].finish_reason == "length" else "completed"
    )

    events = post_stream(cluster, "/v1/responses", {
        "model": MODEL, "input": QUESTION, "temperature": 0, "max_output_tokens": TOKENS,
        "stream": True,
    })  # fmt: skip
    names = [name for name, _ in events]
    assert names[:4] == [
        "response.created", "response.in_progress", "response.output_item.added",
        "response.content_part.added",
    ]  # fmt: skip
    assert names[-4:-1] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
    ]
    assert names[-1] in ("response.completed", "response.incomplete")
    assert [d["sequence_number"] for _, d in events] == list(range(len(events)))
    assert all(d["type"] == name for name, d in events)
    deltas = "".join(d["delta"] for n, d in events if n == "response.output_text.delta")
    assert deltas == expected.choices[0].message.content
    final = events[-1][1]["response"]
    assert final["output"][0]["content"][0]["text"] == deltas
    assert final["usage"]["output_tokens"] == expected.usage.completion_tokens


def test_messages_answer_equals_chat_completions_whole_and_streamed(
    cluster: GatewayCluster,
) -> None:
    expected = chat_answer(cluster)
    client = anthropic.Anthropic(base_url=cluster.url, api_key="unused", max_retries=0)
    message = client.messages.create(
        model=MODEL, max_tokens=TOKENS, extra_body={"temperature": 0},
        messages=[{"role": "user", "content": QUESTION}],
    )  # fmt: skip
    assert message.content[0].type == "text"
    assert message.content[0].text == expected.choices[0].message.content
    length = expected.choices[0].finish_reason == "length"
    assert message.stop_reason == ("max_tokens" if length else "end_turn")
    assert message.usage.input_tokens == expected.usage.prompt_tokens
    assert message.usage.output_tokens == expected.usage.completion_tokens

    events = post_stream(cluster, "/v1/messages", {
        "model": MODEL, "max_tokens": TOKENS, "temperature": 0, "stream": True,
        "messages": [{"role": "user", "content": QUESTION}],
    })  # fmt: skip
    names = [name for name, _ in events if name != "ping"]
    deltas = [n for n in names if n == "content_block_delta"]
    assert names == [
        "message_start", "content_block_start", *deltas, "content_block_stop",
        "message_delta", "message_stop",
    ]  # fmt: skip
    text = "".join(d["delta"]["text"] for n, d in events if n == "content_block_delta")
    assert text == expected.choices[0].message.content
    assert events[-2][1]["delta"]["stop_reason"] == message.stop_reason

    counted = client.messages.count_tokens(
        model=MODEL, messages=[{"role": "user", "content": QUESTION}]
    )
    assert counted.input_tokens == expected.usage.prompt_tokens


def test_a_stop_sequence_is_named_in_stop_reason(cluster: GatewayCluster) -> None:
    expected = chat_answer(cluster).choices[0].message.content
    word = expected.split()[1]  # a word the greedy answer writes
    client = anthropic.Anthropic(base_url=cluster.url, api_key="unused", max_retries=0)
    message = client.messages.create(
        model=MODEL, max_tokens=TOKENS, stop_sequences=[word], extra_body={"temperature": 0},
        messages=[{"role": "user", "content": QUESTION}],
    )  # fmt: skip
    assert message.stop_reason == "stop_sequence"
    assert message.stop_sequence == word
    assert word not in message.content[0].text


def test_ollama_chat_and_generate_equal_chat_completions(cluster: GatewayCluster) -> None:
    expected = chat_answer(cluster)
    text = expected.choices[0].message.content
    client = ollama.Client(host=cluster.url)
    options = {"temperature": 0, "num_predict": TOKENS}
    reply = client.chat(
        model=MODEL, messages=[{"role": "user", "content": QUESTION}], options=options
    )
    assert reply.message.content == text
    assert reply.prompt_eval_count == expected.usage.prompt_tokens
    assert reply.eval_count == expected.usage.completion_tokens
    assert (
        client.generate(model=MODEL + ":latest", prompt=QUESTION, options=options).response == text
    )
    lines = post_stream(cluster, "/api/chat", {
        "model": MODEL, "messages": [{"role": "user", "content": QUESTION}], "options": options,
    })  # stream: Ollama's default  # fmt: skip
    assert [line["done"] for line in lines] == [False] * (len(lines) - 1) + [True]
    assert "".join(line["message"]["content"] for line in lines) == text
    assert lines[-1]["done_reason"] in ("stop", "length")
    assert [m.model for m in client.list().models] == [MODEL]
    assert "assistant :" in (client.show(MODEL).template or "")
    assert httpx.get(cluster.url + "/api/version").json()["version"]


def test_previous_response_id_continues_and_store_false_is_not_kept(
    cluster: GatewayCluster,
) -> None:
    client = client_for(cluster)
    first = client.responses.create(model=MODEL, input=QUESTION, temperature=0, max_output_tokens=4)
    follow = client.responses.create(
        model=MODEL, input="paris", previous_response_id=first.id, temperature=0,
        max_output_tokens=4,
    )  # fmt: skip
    assert follow.previous_response_id == first.id
    whole = client_for(cluster).chat.completions.create(
        model=MODEL, temperature=0, max_tokens=4,
        messages=[
            {"role": "user", "content": QUESTION},
            {"role": "assistant", "content": first.output_text},
            {"role": "user", "content": "paris"},
        ],
    )  # fmt: skip
    assert follow.output_text == whole.choices[0].message.content  # the same conversation
    assert follow.usage is not None and follow.usage.input_tokens == whole.usage.prompt_tokens
    unkept = client.responses.create(
        model=MODEL, input=QUESTION, store=False, temperature=0, max_output_tokens=2
    )
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, input="x", previous_response_id=unkept.id)
    assert caught.value.body["param"] == "previous_response_id"  # type: ignore[index]


def test_metrics_count_requests_per_api(cluster: GatewayCluster) -> None:
    client_for(cluster).models.list()
    httpx.get(cluster.url + "/api/tags")
    text = httpx.get(cluster.url + "/metrics").text
    for api in ("openai", "openai-responses", "anthropic", "ollama"):
        assert f'meshnet_gateway_api_requests_total{{api="{api}"}}' in text, api


# -- refusals, each in its API's shape ------------------------------------------------


def refusal(
    cluster: GatewayCluster, api: str, body: dict[str, Any], **headers: str
) -> httpx.Response:
    path = {"responses": "/v1/responses", "messages": "/v1/messages", "ollama": "/api/chat"}[api]
    with cluster.http() as http:
        return http.post(path, json=body, headers=headers)


def request(api: str, model: str = MODEL, content: str = QUESTION, **extra: Any) -> dict[str, Any]:
    if api == "responses":
        return {"model": model, "input": content, **extra}
    if api == "messages":
        return {
            "model": model,
            "max_tokens": 4,
            "messages": [{"role": "user", "content": content}],
            **extra,
        }
    return {
        "model": model,
        "messages": [{"role": "user", "content": content}],
        "stream": False,
        **extra,
    }


def assert_shape(api: str, reply: httpx.Response, status: int, words: str) -> None:
    """The API's documented error shape (OpenAI's error object; Anthropic's typed error;
    Ollama's {"error": str}), with the status and a sentence that names `words`."""
    assert reply.status_code == status, reply.text
    body = reply.json()
    if api == "responses":
        assert set(body) == {"error"} and set(body["error"]) == {"message", "type", "param", "code"}
        message = body["error"]["message"]
    elif api == "messages":
        assert body["type"] == "error" and set(body["error"]) == {"type", "message"}
        kinds = {400: "invalid_request_error", 401: "authentication_error",
                 404: "not_found_error", 503: "overloaded_error"}  # fmt: skip
        assert body["error"]["type"] == kinds[status]
        message = body["error"]["message"]
    else:
        assert set(body) == {"error"} and isinstance(body["error"], str)
        message = body["error"]
    assert words in message, message
    assert api == "responses" or reply.headers["X-Meshnet-Reason"]  # the stable reason code


APIS = ["responses", "messages", "ollama"]


@pytest.mark.parametrize("api", APIS)
def test_unknown_model_too_long_prompt_and_unsupported_field_are_refused_in_the_apis_shape(
    cluster: GatewayCluster, api: str
) -> None:
    assert_shape(
        api, refusal(cluster, api, request(api, model="no-such-model")), 404, "no-such-model"
    )
    long = " ".join(["paris"] * 200)  # past the tiny model's context of 128
    assert_shape(api, refusal(cluster, api, request(api, content=long)), 400, "context")
    unsupported = {"responses": {"reasoning": {"effort": "high"}},
                   "messages": {"thinking": {"type": "enabled", "budget_tokens": 1024}},
                   "ollama": {"options": {"mirostat": 2}}}[api]  # fmt: skip
    field = {"responses": "reasoning", "messages": "thinking", "ollama": "options.mirostat"}[api]
    assert_shape(api, refusal(cluster, api, request(api, **unsupported)), 400, field)


def test_built_in_tools_and_images_name_the_field(cluster: GatewayCluster) -> None:
    tools = request("responses", tools=[{"type": "web_search"}])
    assert_shape("responses", refusal(cluster, "responses", tools), 400, "tools[0]")
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "x"}}
    body = request("messages")
    body["messages"][0]["content"] = [image]
    assert_shape("messages", refusal(cluster, "messages", body), 400, "messages[0].content[0]")
    body = request("messages")
    del body["max_tokens"]
    assert_shape("messages", refusal(cluster, "messages", body), 400, "max_tokens")


@pytest.mark.parametrize("api", APIS)
def test_a_dark_recipe_is_refused_in_the_apis_shape(
    cluster: GatewayCluster, chat_model: Path, api: str
) -> None:
    other = identity(chat_model, 0, 4, artifact="tests/dark-chat", content="d" * 64)
    dark = start_real_node(chat_model, 0, 4, identity=other)
    try:
        cluster.join(dark)
        reply = refusal(cluster, api, request(api, model="tests/dark-chat"))
        assert_shape(api, reply, 503, "dark")
        assert int(reply.headers["Retry-After"]) >= 1
    finally:
        cluster.nodes.remove(dark)
        dark.stop()


@pytest.fixture
def keyed(cluster: GatewayCluster, capsys: pytest.CaptureFixture[str]) -> Iterator[str]:
    """A key issued for the test (so keys are required), revoked after it."""
    key = add_key(cluster, capsys, "--label", "faces")
    wait_until(lambda: httpx.get(cluster.url + "/api/tags").status_code == 401, 30, "keys required")
    try:
        yield key
    finally:
        ids = [line.split()[0] for line in _listed(cluster, capsys) if "faces" in line]
        for key_id in ids:
            assert main(["keys", "revoke", key_id, "--db", db_url(cluster)]) == 0
        wait_until(
            lambda: httpx.get(cluster.url + "/api/tags").status_code == 200, 30, "open again"
        )


def _listed(cluster: GatewayCluster, capsys: pytest.CaptureFixture[str]) -> list[str]:
    capsys.readouterr()
    assert main(["keys", "list", "--db", db_url(cluster)]) == 0
    return capsys.readouterr().out.splitlines()


def test_keys_missing_or_wrong_are_refused_and_x_api_key_is_accepted(
    cluster: GatewayCluster, keyed: str
) -> None:
    for api in APIS:
        assert_shape(api, refusal(cluster, api, request(api)), 401, "API key")
        wrong = refusal(cluster, api, request(api), Authorization="Bearer mnk_wrong")
        assert_shape(api, wrong, 401, "not valid")
    assert_shape(
        "messages",
        refusal(cluster, "messages", request("messages"), **{"x-api-key": "mnk_wrong"}),
        401,
        "not valid",
    )
    message = anthropic.Anthropic(
        base_url=cluster.url, api_key=keyed, max_retries=0
    ).messages.create(model=MODEL, max_tokens=2, messages=[{"role": "user", "content": QUESTION}])
    assert message.usage.output_tokens >= 1
    with pytest.raises(anthropic.AuthenticationError):
        anthropic.Anthropic(
            base_url=cluster.url, api_key="mnk_wrong", max_retries=0
        ).messages.create(
            model=MODEL, max_tokens=2, messages=[{"role": "user", "content": QUESTION}]
        )
    with pytest.raises(ollama.ResponseError) as caught:
        ollama.Client(host=cluster.url).list()
    assert caught.value.status_code == 401
    authorized = ollama.Client(host=cluster.url, headers={"Authorization": f"Bearer {keyed}"})
    assert [m.model for m in authorized.list().models] == [MODEL]


def test_top_k_is_sent_to_the_last_hop_and_refused_where_the_gateway_samples(
    cluster: GatewayCluster,
) -> None:
    greedy = chat_answer(cluster).choices[0].message.content
    # top_k 1 at temperature 1 leaves the last hop one token to draw: the greedy answer
    top_1 = {"temperature": 1.0, "seed": 5, "top_k": 1}
    assert chat_answer(cluster, extra_body=top_1).choices[0].message.content == greedy
    with pytest.raises(openai.BadRequestError) as caught:
        chat_answer(cluster, presence_penalty=0.5, extra_body=top_1)
    assert caught.value.body["param"] == "top_k"  # type: ignore[index]
