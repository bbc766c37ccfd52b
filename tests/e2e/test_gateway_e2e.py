"""The gateway's proof on real processes: a tracker and three node processes on
loopback serving the default model (layers 0–15 once, 15–30 twice).

- the official openai client, streaming at temperature 0, answers exactly what
  transformers' greedy decoding answers on the same weights;
- four concurrent streaming chats all come out right, and a client that
  disconnects mid-stream leaves every node with 0 open sessions;
- kill -9 of the node serving the second half mid-stream: the answer completes
  and equals the undisturbed one; the stall is reported;
- keys (issued by the CLI against the tracker's database): none, wrong and
  revoked keys get 401 in OpenAI's shape, a key over its limit 429.
"""

from __future__ import annotations

import itertools
import json
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import torch

from app.demo.processes import Child, start_node, start_tracker
from core.dataplane.tls import pinned_client_context
from core.models.tokenizer import ChatTokenizer
from tests.support.node_lines import registered_node_id
from tests.support.waiting import wait_until

pytestmark = pytest.mark.slow

QUESTION = "Name three colours."
NEW_TOKENS = 24


@dataclass
class Network:
    url: str
    workdir: Path
    model_dir: Path
    tracker: Child
    nodes: dict[str, Child]  # node id -> its process
    node_ids: dict[str, str] = field(default_factory=dict)  # child name -> node id

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def state(self) -> dict[str, Any]:
        return dict(httpx.get(self.url + "/api/v1/state", timeout=10, trust_env=False).json())

    def open_sessions(self) -> dict[str, int]:
        """Each live node's open sessions, from its own data plane (/v1/health)."""
        counts: dict[str, int] = {}
        for node in self.state()["nodes"]:
            if node["node_id"] not in self.nodes or self.nodes[node["node_id"]].exited is not None:
                continue
            # The data plane is https:// with a self-signed certificate (docs/wire.md#tls).
            base = node["endpoint"].replace("wss://", "https://").replace("ws://", "http://")
            reply = httpx.get(base + "/v1/health", timeout=5, verify=pinned_client_context())
            counts[node["node_id"]] = int(reply.json()["open_sessions"])
        return counts

    def model(self) -> str:
        return str(
            next(r for r in self.state()["recipes"] if r["status"] == "certified")["artifact_id"]
        )


@pytest.fixture(scope="module")
def network(default_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Network]:
    workdir = tmp_path_factory.mktemp("gateway-e2e")
    registered: dict[str, str] = {}

    def on_line(name: str, line: object) -> None:
        if (node_id := registered_node_id(line)) is not None:
            registered[name] = node_id

    tracker, url = start_tracker(workdir, on_line, heartbeat_s=1.0)
    children: list[Child] = [tracker]
    try:
        for index, layers in enumerate([(0, 15), (15, 30), (15, 30)], start=1):
            children.append(start_node(index, workdir, url, default_model_dir, layers, on_line))
        network = Network(url, workdir, default_model_dir, tracker, {})
        wait_until(
            lambda: (
                len(registered) == 3
                and any(r["status"] == "certified" for r in network.state()["recipes"])
            ),
            300,
            "three nodes and a certified recipe",
        )
        network.node_ids = dict(registered)
        network.nodes = {registered[c.name]: c for c in children[1:]}
        wait_until(
            lambda: (
                len([n for n in network.state()["nodes"] if n["reachability"] == "reachable"]) == 3
            ),
            120,
            "all three nodes reachable",
        )
        yield network
    finally:
        for child in reversed(children):
            child.stop()


def greedy_answer(model_dir: Path, new_tokens: int) -> str:
    from transformers import AutoModelForCausalLM

    tokenizer = ChatTokenizer.from_folder(model_dir)
    prompt = tokenizer.encode_chat([{"role": "user", "content": QUESTION}])
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    with torch.inference_mode():
        out = model.generate(
            torch.tensor([prompt]),
            max_new_tokens=new_tokens,
            do_sample=False,
            attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
        )
    ids = [int(t) for t in out[0, len(prompt) :]]
    return tokenizer.decode(ids)


def openai_stream(network: Network, new_tokens: int = NEW_TOKENS) -> str:
    client = openai.OpenAI(base_url=network.base_url, api_key="unused", max_retries=0)
    stream = client.chat.completions.create(
        model=network.model(),
        messages=[{"role": "user", "content": QUESTION}],
        temperature=0,
        max_tokens=new_tokens,
        stream=True,
    )
    return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)


@pytest.fixture(scope="module")
def expected(network: Network) -> str:
    return greedy_answer(network.model_dir, NEW_TOKENS)


def test_openai_client_streaming_at_temperature_zero_equals_transformers_greedy(
    network: Network, expected: str
) -> None:
    assert expected.strip()
    assert openai_stream(network) == expected


def test_four_concurrent_chats_are_correct_and_a_disconnect_frees_every_session(
    network: Network, expected: str
) -> None:
    answers: list[str] = []
    errors: list[BaseException] = []

    def chat() -> None:
        try:
            answers.append(openai_stream(network))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=chat) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(600)
    assert not errors and answers == [expected] * 4

    body = {
        "model": network.model(),
        "messages": [{"role": "user", "content": "Tell me a long story."}],
        "max_tokens": 200,
        "stream": True,
    }
    with (
        httpx.Client(timeout=120, trust_env=False) as http,
        http.stream("POST", network.base_url + "/chat/completions", json=body) as reply,
    ):
        lines = (line for line in reply.iter_lines() if line.startswith("data:"))
        next(lines), next(lines), next(lines)
        assert sum(network.open_sessions().values()) >= 2  # both hops hold the session
    wait_until(
        lambda: all(count == 0 for count in network.open_sessions().values()),
        60,
        "every node's open sessions to return to 0",
    )


def test_kill_9_of_the_serving_node_mid_stream_gives_the_same_answer(
    network: Network, expected: str
) -> None:
    body = {
        "model": network.model(),
        "messages": [{"role": "user", "content": QUESTION}],
        "max_tokens": NEW_TOKENS,
        "temperature": 0,
        "stream": True,
    }
    text: list[str] = []
    stamps: list[float] = []
    killed_at: float | None = None
    with (
        httpx.Client(timeout=300, trust_env=False) as http,
        http.stream("POST", network.base_url + "/chat/completions", json=body) as reply,
    ):
        assert reply.status_code == 200
        serving = reply.headers["X-Meshnet-Route"].split(",")[1].split(":")[0]
        for line in reply.iter_lines():
            if not line.startswith("data:") or line == "data: [DONE]":
                continue
            event = json.loads(line[5:])
            assert "error" not in event, event
            for choice in event["choices"]:
                if choice["delta"].get("content"):
                    text.append(choice["delta"]["content"])
                    stamps.append(time.perf_counter())
            if len(text) == 6 and killed_at is None:
                network.nodes[serving].process.kill()  # SIGKILL: no goodbye to anyone
                killed_at = time.perf_counter()
    assert killed_at is not None
    assert "".join(text) == expected
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    after = [s for s in stamps if s > killed_at]
    stall = after[0] - killed_at if after else float("nan")
    print(
        f"\nfailover after kill -9 of {serving[:8]}: stall {stall * 1000:.0f} ms before the "
        f"next token (median gap between tokens {statistics.median(gaps) * 1000:.0f} ms)"
    )


def keys_cli(network: Network, *args: str) -> str:
    db = f"sqlite:///{network.workdir / 'tracker.db'}"
    result = subprocess.run(
        [sys.executable, "-m", "tracker_service.cli", "keys", *args, "--db", db],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_keys_none_wrong_and_revoked_get_401_and_limits_429(network: Network) -> None:
    key = keys_cli(network, "add", "--label", "e2e").strip().splitlines()[-1]
    limited = keys_cli(network, "add", "--label", "tight", "--requests-per-minute", "1")
    limited_key = limited.strip().splitlines()[-1]

    def status(api_key: str | None) -> int:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        return httpx.get(network.base_url + "/models", headers=headers, trust_env=False).status_code

    wait_until(lambda: status(None) == 401, 30, "the tracker to require keys")
    for bad in (None, "mnk_wrong"):
        reply = httpx.get(
            network.base_url + "/models",
            headers={"Authorization": f"Bearer {bad}"} if bad else {},
            trust_env=False,
        )
        assert reply.status_code == 401
        assert reply.json()["error"]["code"] == "invalid_api_key"
    assert status(key) == 200
    keys_cli(network, "revoke", "1")
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=network.base_url, api_key=key, max_retries=0).models.list()
    assert status(limited_key) == 200
    with pytest.raises(openai.RateLimitError) as caught:
        openai.OpenAI(base_url=network.base_url, api_key=limited_key, max_retries=0).models.list()
    assert int(caught.value.response.headers["Retry-After"]) >= 1
