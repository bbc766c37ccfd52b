"""Failover mid-stream on a live gateway: a hop that dies is replaced, the prefix is
replayed, and the greedy answer comes out exactly as an undisturbed run; with no
replacement the stream ends with an OpenAI-shaped error, never a hang; a node that
refuses sessions (no room) is skipped."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from tests.support.waiting import wait_until
from tests.tracker_service.gateway_cluster import (
    MODEL,
    GatewayCluster,
    build_chat_model,
    client,
    failovers,
    greedy_ids,
    slow,
    start_cluster,
)

PROMPT = [100, 101, 102]
NEW_TOKENS = 30


@pytest.fixture(scope="module")
def chat_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_chat_model(tmp_path_factory.mktemp("failover-tiny-chat"))


@pytest.fixture
def cluster(chat_model: Path, tmp_path: Path) -> Iterator[GatewayCluster]:
    cluster = start_cluster(tmp_path, chat_model)
    try:
        yield cluster
    finally:
        cluster.stop()


def stream_text(cluster: GatewayCluster, *, kill_after: int | None = None, among=()) -> str:
    stream = client(cluster).completions.create(
        model=MODEL, prompt=PROMPT, max_tokens=NEW_TOKENS, temperature=0, stream=True
    )
    parts: list[str] = []
    for index, chunk in enumerate(stream):
        parts.append(chunk.choices[0].text if chunk.choices else "")
        if kill_after is not None and index == kill_after:
            serving = [n for n in among if n.sessions.open_count > 0]
            assert len(serving) == 1, "exactly one second-half node serves the stream"
            serving[0].stop()
    return "".join(parts)


def expected(cluster: GatewayCluster) -> str:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(cluster.model_dir / "tokenizer.json"))
    return str(tokenizer.decode(greedy_ids(cluster.model_dir, PROMPT, NEW_TOKENS)))


def test_killing_the_serving_node_mid_stream_gives_the_undisturbed_greedy_answer(
    cluster: GatewayCluster,
) -> None:
    cluster.add_node(0, 2)
    second = [slow(cluster.add_node(2, 4)), slow(cluster.add_node(2, 4))]
    cluster.wait_certified()
    undisturbed = stream_text(cluster)
    assert undisturbed == expected(cluster)
    assert len(undisturbed.split()) == NEW_TOKENS
    before = failovers(cluster)
    began = time.perf_counter()
    disturbed = stream_text(cluster, kill_after=5, among=second)
    took = time.perf_counter() - began
    assert disturbed == undisturbed  # no token lost or repeated
    assert failovers(cluster) == before + 1
    wait_until(lambda: cluster.open_sessions() == 0, 30, "every session to close")
    print(f"\nfailover: the killed stream took {took:.2f} s for {NEW_TOKENS} tokens")


def test_with_no_replacement_the_stream_ends_with_an_openai_error(
    cluster: GatewayCluster,
) -> None:
    first = cluster.add_node(0, 2)
    second = slow(cluster.add_node(2, 4))
    cluster.wait_certified()
    with pytest.raises(openai.APIError) as caught:
        stream_text(cluster, kill_after=3, among=[second])
    assert "no replacement" in caught.value.message
    wait_until(lambda: first.sessions.open_count == 0, 30, "the first hop to free its session")
    with pytest.raises(openai.APIStatusError) as refused:  # no route now: a 503 up front
        client(cluster).completions.create(model=MODEL, prompt=PROMPT, max_tokens=2)
    assert refused.value.status_code == 503
    assert refused.value.response.headers["Retry-After"]


def test_a_node_that_refuses_sessions_is_skipped(chat_model: Path, tmp_path: Path) -> None:
    # Audits off: the refusing node is the only other holder of 2-4, so an inline
    # probation audit of the healthy one would find no replayer and withhold its step
    # (tests/adversary/test_unchecked_probation.py); here only the refusal is tested.
    cluster = start_cluster(tmp_path, chat_model, audit_rate=0.0, audit_probation_rate=0.0)
    try:
        cluster.add_node(0, 2)
        full = cluster.add_node(2, 4, kv_budget_bytes=1)  # no room for any session
        cluster.add_node(2, 4)
        cluster.wait_certified()
        answers = {
            client(cluster)
            .completions.create(model=MODEL, prompt=PROMPT, max_tokens=5, temperature=0)
            .choices[0]
            .text
            for _ in range(4)
        }
        assert len(answers) == 1
        assert full.sessions.open_count == 0
    finally:
        cluster.stop()


def test_a_hop_past_its_step_deadline_is_replaced(chat_model: Path, tmp_path: Path) -> None:
    # Audits off: an audit replaying on the stuck node makes the dialer see it stuck and
    # routes avoid it, so this test of the step deadline would never see it picked.
    cluster = start_cluster(
        tmp_path,
        chat_model,
        gateway_step_timeout_s=1.0,
        audit_rate=0.0,
        audit_probation_rate=0.0,
    )
    try:
        cluster.add_node(0, 2)
        stuck = cluster.add_node(2, 4)
        healthy = cluster.add_node(2, 4)
        cluster.wait_certified()
        run_layers = stuck.shard.run_layers
        hang = {"on": False}

        def maybe_hang(*args: Any, **kwargs: Any) -> Any:
            if hang["on"]:
                time.sleep(3.0)  # past the 1 s step deadline
            return run_layers(*args, **kwargs)

        stuck.shard.run_layers = maybe_hang  # type: ignore[method-assign]
        reference = expected(cluster)
        hang["on"] = True
        for _ in range(8):  # whichever node the route picks, the answer is right
            assert stream_text(cluster) == reference
            if failovers(cluster) >= 1:
                break
        assert failovers(cluster) >= 1  # the stuck node was picked, and replaced
        wait_until(lambda: healthy.sessions.open_count == 0, 30, "the session to close")
    finally:
        cluster.stop()


def test_a_client_that_leaves_a_non_streamed_answer_stops_its_generation(
    cluster: GatewayCluster, caplog: pytest.LogCaptureFixture
) -> None:
    cluster.add_node(0, 2)
    slow(cluster.add_node(2, 4))
    cluster.wait_certified()
    body = {"model": MODEL, "prompt": PROMPT, "max_tokens": 100, "temperature": 0}
    with caplog.at_level("INFO", logger="tracker_service.gateway.requests"):
        with cluster.http() as http, pytest.raises(httpx.ReadTimeout):
            http.post("/v1/completions", json=body, timeout=httpx.Timeout(60, read=0.5))
        wait_until(lambda: any("outcome=" in r.getMessage() for r in caplog.records), 30)
    wait_until(lambda: cluster.open_sessions() == 0, 30, "the abandoned route to close")
    line = next(r.getMessage() for r in caplog.records if "outcome=" in r.getMessage())
    assert "outcome=cancelled" in line, line
    produced = int(line.split("completion_tokens=")[1].split()[0])
    assert produced < 100  # generation stopped when the client left
