"""The OpenAI-compatible gateway end to end: a real tracker on loopback, real node
data planes on a tiny Llama, and the official ``openai`` client unchanged."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from tokenizers import Tokenizer

from tests.support.waiting import wait_until
from tests.tracker_service.gateway_cluster import (
    MODEL,
    GatewayCluster,
    build_chat_model,
    certified_cluster,
    greedy_ids,
    identity,
)
from tests.tracker_service.real_nodes import start_real_node

QUESTION = "the capital of france is"
EOS = 2


@pytest.fixture(scope="module")
def chat_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_chat_model(tmp_path_factory.mktemp("gateway-tiny-chat"))


@pytest.fixture(scope="module")
def cluster(chat_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayCluster]:
    with certified_cluster(tmp_path_factory.mktemp("gateway-tracker"), chat_model) as cluster:
        yield cluster


def client_for(cluster: GatewayCluster, **kw: object) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=cluster.base_url,
        api_key=str(kw.pop("api_key", "unused")),
        max_retries=0,
        **kw,  # type: ignore[arg-type]
    )


def expected_answer(model_dir: Path, max_new: int) -> tuple[str, list[int], int]:
    """transformers' greedy text for QUESTION as a chat, the ids, and the prompt size."""
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    text = f"user : {QUESTION} assistant :"
    prompt = tokenizer.encode(text, add_special_tokens=False).ids
    ids = greedy_ids(model_dir, prompt, max_new)
    if EOS in ids:
        ids = ids[: ids.index(EOS) + 1]
    answer = tokenizer.decode([i for i in ids if i != EOS], skip_special_tokens=True)
    return answer, ids, len(prompt)


def test_models_lists_the_certified_model(cluster: GatewayCluster) -> None:
    models = client_for(cluster).models.list()
    assert [m.id for m in models.data] == [MODEL]


def test_streamed_chat_at_temperature_zero_equals_transformers_greedy(
    cluster: GatewayCluster,
) -> None:
    answer, ids, prompt_size = expected_answer(cluster.model_dir, 12)
    client = client_for(cluster)
    stream = client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": QUESTION}],
        temperature=0,
        max_tokens=12,
        stream=True,
        stream_options={"include_usage": True},
    )
    parts: list[str] = []
    finish = None
    usage = None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            parts.append(choice.delta.content or "")
            finish = choice.finish_reason or finish
    assert "".join(parts) == answer
    assert usage is not None
    assert usage.prompt_tokens == prompt_size
    assert usage.completion_tokens == len(ids)
    assert finish == ("stop" if ids[-1] == EOS else "length")


def test_chat_without_streaming_gives_the_same_answer_and_usage(cluster: GatewayCluster) -> None:
    answer, ids, prompt_size = expected_answer(cluster.model_dir, 12)
    reply = client_for(cluster).chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": QUESTION}],
        temperature=0,
        max_tokens=12,
    )
    assert reply.choices[0].message.content == answer
    assert reply.choices[0].message.role == "assistant"
    assert reply.usage is not None
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (prompt_size, len(ids))
    assert reply.usage.total_tokens == prompt_size + len(ids)


def test_completions_take_text_or_token_ids_and_honour_stop(cluster: GatewayCluster) -> None:
    tokenizer = Tokenizer.from_file(str(cluster.model_dir / "tokenizer.json"))
    prompt = tokenizer.encode(QUESTION, add_special_tokens=False).ids
    ids = greedy_ids(cluster.model_dir, prompt, 8)
    ids = ids[: ids.index(EOS)] if EOS in ids else ids
    full = tokenizer.decode(ids)
    client = client_for(cluster)
    by_text = client.completions.create(model=MODEL, prompt=QUESTION, max_tokens=8, temperature=0)
    by_ids = client.completions.create(model=MODEL, prompt=prompt, max_tokens=8, temperature=0)
    assert by_text.choices[0].text == by_ids.choices[0].text == full
    words = full.split()
    if len(words) >= 3:
        stop = f" {words[2]}"
        cut = client.completions.create(
            model=MODEL, prompt=QUESTION, max_tokens=8, temperature=0, stop=[stop]
        )
        assert cut.choices[0].text == full[: full.index(stop)]
        assert cut.choices[0].finish_reason == "stop"
        streamed = client.completions.create(
            model=MODEL, prompt=QUESTION, max_tokens=8, temperature=0, stop=stop, stream=True
        )
        assert "".join(c.choices[0].text for c in streamed if c.choices) == cut.choices[0].text


def test_sampling_with_a_seed_is_repeatable(cluster: GatewayCluster) -> None:
    client = client_for(cluster)
    answers = {
        client.completions.create(
            model=MODEL, prompt=QUESTION, max_tokens=6, temperature=1.0, top_p=0.9, seed=7
        )
        .choices[0]
        .text
        for _ in range(2)
    }
    assert len(answers) == 1


def test_unknown_model_is_a_404_in_openai_shape(cluster: GatewayCluster) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        client_for(cluster).chat.completions.create(
            model="no-such-model", messages=[{"role": "user", "content": "hi"}]
        )
    body = caught.value.body
    assert isinstance(body, dict)
    assert body["code"] == "model_not_found"
    assert MODEL in body["message"]  # it names what does serve


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"n": 9}, "n"),
        ({"logprobs": True, "top_logprobs": 21}, "top_logprobs"),
        ({"temperature": 3.5}, "temperature"),
        ({"tools": [{"type": "function", "function": {"name": "f g"}}]}, "tools"),
        ({"modalities": ["audio"]}, "modalities"),
    ],
)
def test_bad_parameters_are_a_clear_400(
    cluster: GatewayCluster, extra: dict[str, object], param: str
) -> None:
    with cluster.http() as http:
        reply = http.post(
            "/v1/chat/completions",
            json={"model": MODEL, "messages": [{"role": "user", "content": "hi"}], **extra},
        )
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param
    assert param in error["message"]


def test_prompt_plus_max_tokens_past_the_context_is_a_400(cluster: GatewayCluster) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client_for(cluster).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": QUESTION}], max_tokens=500
        )
    body = caught.value.body
    assert isinstance(body, dict)
    assert body["code"] == "context_length_exceeded"
    assert "128" in body["message"] and "max_tokens" in body["message"]


def test_a_model_with_only_a_dark_recipe_is_named_dark(
    cluster: GatewayCluster, chat_model: Path
) -> None:
    other = identity(chat_model, 0, 4, artifact="tests/dark-chat", content="d" * 64)
    dark = start_real_node(chat_model, 0, 4, identity=other)
    try:
        cluster.join(dark)
        with cluster.http() as http:
            reply = http.post(
                "/v1/chat/completions",
                json={"model": "tests/dark-chat", "messages": [{"role": "user", "content": "x"}]},
            )
        assert reply.status_code == 503, reply.text
        assert reply.headers["Retry-After"]
        error = reply.json()["error"]
        assert error["code"] == "recipe_dark"
        assert "tiny-chat-fp32 is dark" in error["message"]
        assert [m.id for m in client_for(cluster).models.list().data] == [MODEL]
    finally:
        cluster.nodes.remove(dark)
        dark.stop()


def test_four_concurrent_streams_are_all_correct(cluster: GatewayCluster) -> None:
    answer, _, _ = expected_answer(cluster.model_dir, 12)
    results: list[str] = []
    errors: list[BaseException] = []

    def chat() -> None:
        try:
            stream = client_for(cluster).chat.completions.create(
                model=MODEL,
                messages=[{"role": "user", "content": QUESTION}],
                temperature=0,
                max_tokens=12,
                stream=True,
            )
            results.append("".join(c.choices[0].delta.content or "" for c in stream if c.choices))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=chat) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors
    assert results == [answer] * 4
    wait_until(lambda: cluster.open_sessions() == 0, 30, "every session to close")


def test_a_client_that_disconnects_mid_stream_leaves_no_session_open(
    cluster: GatewayCluster,
) -> None:
    with (
        cluster.http() as http,
        http.stream(
            "POST",
            "/v1/completions",
            json={"model": MODEL, "prompt": QUESTION, "max_tokens": 100, "stream": True,
                  "temperature": 1.0, "seed": 1, "stop": []},
        ) as reply,
    ):  # fmt: skip
        assert reply.status_code == 200
        lines = reply.iter_lines()
        next(line for line in lines if line.startswith("data:"))
        assert cluster.open_sessions() > 0
    wait_until(lambda: cluster.open_sessions() == 0, 30, "the nodes to free the session")


def test_metrics_count_requests_tokens_and_first_token_latency(cluster: GatewayCluster) -> None:
    client_for(cluster).completions.create(model=MODEL, prompt=QUESTION, max_tokens=3)
    with cluster.http() as http:
        text = http.get("/metrics").text
    assert 'meshnet_gateway_requests_total{endpoint="completions",outcome="ok"}' in text
    assert 'meshnet_gateway_tokens_total{kind="completion"}' in text
    assert "meshnet_gateway_time_to_first_token_seconds_count" in text
    assert "meshnet_gateway_failovers_total" in text


def test_each_request_logs_one_line_with_route_tokens_and_latency(
    cluster: GatewayCluster, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("INFO", logger="tracker_service.gateway.requests"):
        client_for(cluster).completions.create(
            model=MODEL, prompt=QUESTION, max_tokens=4, user="log-test"
        )
    lines = [r.getMessage() for r in caplog.records if r.name.endswith("gateway.requests")]
    assert len(lines) == 1
    line = lines[0]
    assert line.startswith(f"completions model={MODEL} caller=loopback stream=False outcome=ok")
    for field in (
        "route=",
        "[0,2) -> ",
        "prompt_tokens=5",
        "ttft=",
        "tokens_per_s=",
        "failovers=0",
        "in_route_per_token=",
        "between_steps_per_token=",
    ):
        assert field in line, line
    # where each decode token's time went: the route's steps, or the gateway between them
    record = next(r for r in caplog.records if r.name.endswith("gateway.requests"))
    completion = int(line.split("completion_tokens=")[1].split()[0])
    split = record.__dict__["split_ms"]
    if completion < 2:
        assert split is None
    else:
        in_route, between = split
        assert in_route > 0.0 and between >= 0.0, split
        assert f"in_route_per_token={in_route:.1f}ms" in line
