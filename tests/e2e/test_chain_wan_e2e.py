"""Chained hops and speculative decoding over WAN-like links, with real node processes
(docs/wire.md#chained-hops, #speculative-steps). Every node sits behind a userspace delay
proxy (tests/support/link_delay.py), so each leg of a step pays the delay, the links
between nodes included, and a step mostly waits on the links: the gateway's ``auto`` mode
finds speculative steps faster. A chain's greedy answers equal a star's token for token,
with and without speculative decoding (drafts kept, and others rejected and rewound), and
a hop killed mid-chain is failed over with the same answer."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from app.demo.processes import Child, free_port, start_node, start_tracker
from tests.support.link_delay import Links

PROXY_HOST = "127.0.0.2"
ONE_WAY_S = 0.030
NEW_TOKENS = 24
PROMPTS = [
    "Repeat this line twice: the quick brown fox jumps over the lazy dog.",
    "Count from one to twelve, in words, separated by commas.",
    "What is the capital of France?",
    "Write one sentence about the sea.",
]
# node 1 holds the first half; nodes 2 and 3 both hold the second, so a route survives one
LAYERS = [(0, 15), (15, 30), (15, 30)]
SHAPE = re.compile(r"shape=(\w+)")
DRAFTS = re.compile(r"drafted=(\d+) accepted=(\d+)")


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


@pytest.fixture(scope="module")
def wan(
    default_model_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path, list[Child], Links]]:
    workdir = tmp_path_factory.mktemp("chain-wan")
    tracker, url = start_tracker(workdir, lambda _n, _l: None, heartbeat_s=1.0)
    nodes: list[Child] = []
    ports = [free_port() for _ in LAYERS]
    links = Links(ports, ONE_WAY_S, PROXY_HOST)
    try:
        for i, (span, port) in enumerate(zip(LAYERS, ports, strict=True), start=1):
            extra = ["--port", str(port), "--advertise-host", PROXY_HOST]
            nodes.append(
                start_node(i, workdir, url, default_model_dir, span, lambda _n, _l: None, extra)
            )
        wait_for_model(url, [tracker, *nodes])
        yield url, workdir, nodes, links
    finally:
        links.close()
        for child in reversed([tracker, *nodes]):
            child.stop()


def body(url: str, prompt: str, **extension: object) -> dict[str, object]:
    model = httpx.get(url + "/v1/models", timeout=10, trust_env=False).json()["data"][0]["id"]
    return {
        "model": model,
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": NEW_TOKENS,
        "temperature": 0,
        **extension,
    }


def chat(url: str, prompt: str, **extension: object) -> str:
    reply = httpx.post(
        url + "/v1/chat/completions", json=body(url, prompt, **extension), timeout=300,
        trust_env=False,
    )  # fmt: skip
    assert reply.status_code == 200, reply.text
    return str(reply.json()["choices"][0]["message"]["content"])


def logged(log: Path, pattern: re.Pattern[str], count: int) -> list[tuple[str, ...]]:
    """`pattern`'s groups in the last `count` requests of the tracker's request log."""
    deadline = time.monotonic() + 30  # the tracker logs a request once it has answered it
    while time.monotonic() < deadline:
        found = [m.groups() for m in pattern.finditer(log.read_text(errors="replace"))]
        if len(found) >= count:
            return found[-count:]
        time.sleep(0.2)
    raise AssertionError(f"fewer than {count} requests logged")


def test_chain_star_and_speculative_answers_are_identical_greedy_tokens_over_delayed_links(
    wan: tuple[str, Path, list[Child], Links],
) -> None:
    url, workdir, _, links = wan
    for prompt in PROMPTS:
        star = chat(url, prompt, chain=False, speculative=False)
        assert chat(url, prompt, speculative=False) == star, prompt
        assert chat(url, prompt) == star, prompt  # chain + speculative decoding (auto)
        assert chat(url, prompt, chain=False) == star, prompt  # star + speculative decoding
    log = workdir / "tracker.log"
    requests = 4 * len(PROMPTS)
    shapes = [shape for (shape,) in logged(log, SHAPE, requests)]
    assert shapes == ["star", "chain", "chain", "star"] * len(PROMPTS)
    assert all(proxy.connections > 0 for proxy in links.proxies)  # every hop was delayed
    counts = [(int(d), int(k)) for d, k in logged(log, DRAFTS, requests)]
    drafted, kept = sum(d for d, _ in counts), sum(k for _, k in counts)
    assert drafted > 0, f"auto never speculated: {counts}"
    assert 0 < kept < drafted, counts  # drafts kept, and others rejected then rewound


def test_a_hop_killed_mid_chain_fails_over_with_the_same_answer(
    wan: tuple[str, Path, list[Child], Links],
) -> None:
    url, workdir, nodes, _ = wan
    prompt = "Count from one to twenty, in words, separated by commas."
    want = chat(url, prompt, chain=False, speculative=False)
    by_port = {
        urlsplit(n["endpoint"]).port: n["node_id"]
        for n in httpx.get(url + "/api/v1/state", timeout=10, trust_env=False).json()["nodes"]
    }
    pieces: list[str] = []
    killed = None
    request = body(url, prompt, stream=True, speculative=False)
    with httpx.stream(
        "POST", url + "/v1/chat/completions", json=request, timeout=300, trust_env=False
    ) as stream:
        assert stream.status_code == 200
        route = stream.headers["X-Meshnet-Route"].split(",")
        assert len(route) == 2, route
        second = route[1].split(":")[0]
        for line in stream.iter_lines():
            if not line.startswith("data: {"):
                continue
            delta = httpx.Response(200, content=line[6:]).json()["choices"][0]["delta"]
            pieces.append(delta.get("content") or "")
            if killed is None and len(pieces) == 4:
                killed = next(
                    child
                    for child, port in zip(nodes, ports_of(nodes), strict=True)
                    if by_port.get(port) == second
                )
                killed.process.kill()  # kill -9, mid-answer
    assert killed is not None
    assert "".join(pieces) == want
    failed_over = re.compile(r"stream=True outcome=ok .* failovers=1 .* shape=chain")
    deadline = time.monotonic() + 30  # the tracker logs a request once it has closed it
    while not failed_over.search((workdir / "tracker.log").read_text(errors="replace")):
        assert time.monotonic() < deadline, "the tracker logged no chained route failing over"
        time.sleep(0.2)


def ports_of(nodes: list[Child]) -> list[int]:
    """Each node child's data-plane port, in the order the children were started."""
    ports = []
    for child in nodes:
        argv = [str(arg) for arg in child.process.args]  # type: ignore[union-attr]
        ports.append(int(argv[argv.index("--port") + 1]))
    return ports
