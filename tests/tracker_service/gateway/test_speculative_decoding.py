"""Speculative decoding through real node data planes: the gateway drafts from the
context, the last hop verifies the drafts in one step, rejected drafts are rewound on
every hop, and the greedy answer is token for token transformers' own."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from tests.tracker_service.gateway_cluster import (
    MODEL,
    GatewayCluster,
    build_chat_model,
    certified_cluster,
    greedy_ids,
    start_cluster,
)

NEW_TOKENS = 40
DRAFTS = re.compile(r"drafted=(\d+) accepted=(\d+)")


@pytest.fixture
def cluster(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Iterator[GatewayCluster]:
    model = build_chat_model(tmp_path_factory.mktemp("speculative-chat"))
    # "on": on loopback the steps never wait on links, so "auto" would not speculate
    cluster = start_cluster(tmp_path, model, gateway_speculative_decoding="on")
    try:
        yield cluster
    finally:
        cluster.stop()


def prompts() -> list[list[int]]:
    """Prompts that repeat themselves (drafts found and kept) and ones that do not."""
    looping = [10, 11, 12, 13] * 6
    counting = list(range(20, 60))
    mixed = [(37 * i + 11) % 240 + 10 for i in range(30)]
    quoted = [50, 51, 52, 53, 54, 55, 60, 61, 50, 51, 52, 53]
    return [looping, counting, mixed, quoted, [7], [100, 100, 100, 100, 100]]


def test_speculative_greedy_answers_equal_plain_decoding_over_many_prompts(
    cluster: GatewayCluster, caplog: pytest.LogCaptureFixture
) -> None:
    cluster.add_node(0, 2)
    cluster.add_node(2, 4)
    cluster.wait_certified()
    client = openai.OpenAI(base_url=cluster.base_url, api_key="unused", max_retries=0)
    caplog.set_level(logging.INFO, logger="tracker_service.gateway.requests")
    for prompt in prompts():
        raw = client.completions.with_raw_response.create(
            model=MODEL, prompt=prompt, max_tokens=NEW_TOKENS, temperature=0
        )
        answer = raw.parse()
        want = greedy_ids(cluster.model_dir, prompt, NEW_TOKENS)
        assert answer.usage is not None and answer.usage.completion_tokens == len(want)
        assert answer.choices[0].text == _decode(cluster, want), prompt
    counts = [
        tuple(int(v) for v in m.groups())
        for r in caplog.records
        if (m := DRAFTS.search(r.getMessage())) is not None
    ]
    assert len(counts) == len(prompts())
    drafted = sum(d for d, _ in counts)
    accepted = sum(a for _, a in counts)
    assert 0 < accepted <= drafted, counts  # some round trips carried several tokens
    # (drafts rejected and rewound: tests/core/dataplane/test_speculative_steps.py, and
    # on the real model tests/e2e/test_chain_wan_e2e.py)


def test_sampled_answers_are_drawn_at_the_gateway_and_draft_nothing(
    cluster: GatewayCluster, caplog: pytest.LogCaptureFixture
) -> None:
    """A sampled answer is drawn at the gateway from a greedy last hop's top log-probs
    (issue 35: so an audit can replay the last hop), and a greedy verify step says nothing
    of the distribution speculative sampling needs: sampled answers take plain steps.
    Answers of the asked length come back, and nothing is drafted."""
    cluster.add_node(0, 2)
    cluster.add_node(2, 4)
    cluster.wait_certified()
    client = openai.OpenAI(base_url=cluster.base_url, api_key="unused", max_retries=0)
    caplog.set_level(logging.INFO, logger="tracker_service.gateway.requests")
    for seed, prompt in enumerate(prompts()[:3]):
        answer = client.completions.create(
            model=MODEL, prompt=prompt, max_tokens=NEW_TOKENS, temperature=0.05, seed=seed
        )
        assert answer.usage is not None and 1 <= answer.usage.completion_tokens <= NEW_TOKENS
    counts = [
        tuple(int(v) for v in m.groups())
        for r in caplog.records
        if (m := DRAFTS.search(r.getMessage())) is not None
    ]
    assert counts and sum(d for d, _ in counts) == 0, counts


def test_speculation_switched_off_drafts_nothing(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model = build_chat_model(tmp_path_factory.mktemp("plain-chat"))
    with certified_cluster(tmp_path, model, gateway_speculative_decoding="off") as cluster:
        client = openai.OpenAI(base_url=cluster.base_url, api_key="unused", max_retries=0)
        caplog.set_level(logging.INFO, logger="tracker_service.gateway.requests")
        prompt = [10, 11, 12, 13] * 6
        answer = client.completions.create(
            model=MODEL, prompt=prompt, max_tokens=NEW_TOKENS, temperature=0
        )
        assert answer.choices[0].text == _decode(
            cluster, greedy_ids(cluster.model_dir, prompt, NEW_TOKENS)
        )
        assert any("drafted=0 accepted=0" in r.getMessage() for r in caplog.records)


def _decode(cluster: GatewayCluster, ids: list[int]) -> str:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(cluster.model_dir / "tokenizer.json"))
    return str(tokenizer.decode(ids))
