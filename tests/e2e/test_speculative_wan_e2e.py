"""Speculative decoding over WAN-like links, with real node processes: every hop sits
behind a userspace delay proxy (tests/support/link_delay.py), so a step mostly waits on
round trips and the gateway's ``auto`` mode finds speculative steps faster. Its greedy
answers equal plain decoding's (``"speculative": false``) token for token, and drafts are
kept."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.demo.processes import Child, free_port, split_layers, start_node, start_tracker
from tests.support.link_delay import Links

PROXY_HOST = "127.0.0.2"  # all of 127/8 is loopback on Linux: the proxies' own address
ONE_WAY_S = 0.040  # 4 legs a step: 160 ms of waiting, more than a loaded CPU computes
NEW_TOKENS = 24
PROMPTS = [
    "Repeat this line twice: the quick brown fox jumps over the lazy dog.",
    "Count from one to twelve, in words, separated by commas.",
    "What is the capital of France?",
]
DRAFTS = re.compile(r"drafted=(\d+) accepted=(\d+)")


@pytest.fixture(scope="module")
def wan(
    default_model_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path, Links]]:
    workdir = tmp_path_factory.mktemp("speculative-wan")
    tracker, url = start_tracker(workdir, lambda _n, _l: None, heartbeat_s=1.0)
    children: list[Child] = [tracker]
    layers = split_layers(30, 2)
    ports = [free_port() for _ in layers]
    links = Links(ports, ONE_WAY_S, PROXY_HOST)
    try:
        for i, (span, port) in enumerate(zip(layers, ports, strict=True), start=1):
            extra = ["--port", str(port), "--advertise-host", PROXY_HOST]
            children.append(
                start_node(i, workdir, url, default_model_dir, span, lambda _n, _l: None, extra)
            )
        wait_for_model(url, children)
        yield url, workdir, links
    finally:
        links.close()
        for child in reversed(children):
            child.stop()


def wait_for_model(url: str, children: list[Child], timeout_s: float = 400.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for child in children:
            assert child.exited is None, f"{child.name} exited with {child.exited}"
        models = httpx.get(url + "/v1/models", timeout=10, trust_env=False).json()["data"]
        if models:
            return
        time.sleep(1.0)
    raise AssertionError("the model was not certified in time")


def draft_counts(log: Path) -> list[tuple[int, int]]:
    """(drafted, kept) of every request in the tracker's request log."""
    text = log.read_text(errors="replace")
    return [(int(m.group(1)), int(m.group(2))) for m in DRAFTS.finditer(text)]


def chat(url: str, prompt: str, *, speculative: bool) -> str:
    model = httpx.get(url + "/v1/models", timeout=10, trust_env=False).json()["data"][0]["id"]
    reply = httpx.post(
        url + "/v1/chat/completions",
        json={
            "model": model,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": NEW_TOKENS,
            "temperature": 0,
            "speculative": speculative,
        },
        timeout=300,
        trust_env=False,
    )
    assert reply.status_code == 200, reply.text
    return str(reply.json()["choices"][0]["message"]["content"])


def test_speculative_answers_over_delayed_links_equal_plain_greedy_decoding(
    wan: tuple[str, Path, Links],
) -> None:
    url, workdir, links = wan
    for prompt in PROMPTS:
        plain = chat(url, prompt, speculative=False)
        assert chat(url, prompt, speculative=True) == plain, prompt
    assert all(proxy.connections > 0 for proxy in links.proxies)  # the hops were delayed
    log = workdir / "tracker.log"
    deadline = time.monotonic() + 30  # the tracker logs a request once it has answered it
    while len(counts := draft_counts(log)) < 2 * len(PROMPTS) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(counts) == 2 * len(PROMPTS)
    drafted = sum(d for d, _ in counts)
    kept = sum(a for _, a in counts)
    assert drafted > 0, f"auto never speculated: {counts}"
    assert 0 < kept < drafted, counts  # drafts kept, and others rejected then rewound
