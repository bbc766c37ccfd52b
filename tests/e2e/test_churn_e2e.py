"""Gamers come and go, on real processes of the default model (docs/churn.md).

- a node child paused (`pause` on its control pipe, what the tray and a pause rule
  send) while a user's chat runs through it: the node ends the session at once
  (``node-leaving``) and announces its departure, the gateway fails over, the
  answer is the undisturbed greedy one and ends normally; the node measured its
  memory released within 2 s of the pause and says ``paused``; the tracker lists it
  out of routing;
- the churn benchmark for one minute (benchmarks/churn.py, five nodes, 20 ms links):
  no request fails while a replacement exists, no greedy answer differs, every
  pause released its memory within 2 s as measured inside the node, and the ledger
  credited each answered request's two hops once.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import httpx
import openai
import pytest

from benchmarks.churn import parse
from benchmarks.churn import run as run_churn
from core.dataplane.tls import pinned_client_context
from tests.support.churn_network import ChurnNetwork, Member

pytestmark = pytest.mark.slow

QUESTION = "Count from one to twenty, in words, separated by commas."
NEW_TOKENS = 40
RELEASE_LIMIT_S = 2.0  # the target, measured inside the node
REASONS = re.compile(r"failovers=(\d+) failover_reasons=(\S+)")


def chat(network: ChurnNetwork, model: str, on_chunk: object = None) -> tuple[str, str | None]:
    """A streamed greedy chat through the gateway: (text, finish reason)."""
    client = openai.OpenAI(base_url=network.gateway_url + "/v1", api_key="unused", max_retries=0)
    stream = client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": QUESTION}],
        max_tokens=NEW_TOKENS,
        temperature=0,
        stream=True,
    )
    parts: list[str] = []
    finish: str | None = None
    for index, chunk in enumerate(stream):
        if chunk.choices:
            parts.append(chunk.choices[0].delta.content or "")
            finish = chunk.choices[0].finish_reason or finish
        if callable(on_chunk):
            on_chunk(index)
    return "".join(parts), finish


def open_sessions(member: Member) -> int:
    url = f"https://127.0.0.2:{member.port}/v1/health"
    reply = httpx.get(url, timeout=5, verify=pinned_client_context(), trust_env=False)
    return int(reply.json()["open_sessions"])


def request_lines(network: ChurnNetwork) -> list[str]:
    text = (network.workdir / "tracker.log").read_text(encoding="utf-8", errors="replace")
    return [line for line in text.splitlines() if "outcome=" in line and "failovers=" in line]


def test_a_pause_with_a_chat_open_hands_it_over_and_frees_memory_within_two_seconds(
    default_model_dir: Path, tmp_path: Path
) -> None:
    network = ChurnNetwork(tmp_path, default_model_dir, [(0, 15), (15, 30), (15, 30)], 5.0)
    try:
        model = network.wait_ready()
        undisturbed, finish = chat(network, model)
        assert finish in ("stop", "length") and undisturbed
        second = network.members[1:]
        paused: list[Member] = []

        def pause_mid_answer(index: int) -> None:
            if index != 3:
                return
            serving = [m for m in second if open_sessions(m) > 0]
            assert len(serving) == 1, "one second-half node serves the chat"
            network.pause(serving[0])
            paused.append(serving[0])

        disturbed, finish = chat(network, model, pause_mid_answer)
        assert disturbed == undisturbed  # no token lost, repeated or changed
        assert finish in ("stop", "length")  # a whole answer, ended as it should
        gone = paused[0]
        assert gone.child is not None
        event = gone.child.wait_state("paused", timeout_s=60)
        released = float(event["data"]["memory_released_s"])
        assert released <= RELEASE_LIMIT_S, f"memory released {released:.3f} s after the pause"
        gone.child.send("snapshot")
        snapshot = gone.child.wait_event(lambda e: e["kind"] == "snapshot", timeout_s=30)
        assert snapshot["data"]["state"] == "paused"
        assert snapshot["data"]["memory_released_s"] == released
        gone.read_events()
        assert gone.node_id is not None
        listed = httpx.get(f"{network.url}/api/v1/nodes/{gone.node_id}", timeout=10).json()
        assert listed["live"] is False  # announced: out of routing without waiting
        # The gateway failed the chat over because the node left (its own refusal or the
        # tracker's word, whichever came first), never on a step timeout.
        deadline = time.monotonic() + 30
        while len(request_lines(network)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        found = REASONS.search(request_lines(network)[-1])
        assert found is not None
        failovers, reasons = int(found.group(1)), found.group(2).split(",")
        assert failovers >= 1
        assert set(reasons) <= {"node-leaving", "node-left"}, reasons
    finally:
        network.close()


def test_one_minute_of_churn_fails_no_request_while_a_replacement_exists(
    default_model_dir: Path, tmp_path: Path
) -> None:
    options = parse(["--nodes", "5", "--minutes", "1", "--clients", "3"])
    report = run_churn(options, default_model_dir, tmp_path)
    print("\n" + "\n".join(report.lines(options)))
    assert report.answered > 0
    assert report.failed == 0, report.failures
    assert report.differs == 0
    assert report.released_s, "the driver paused at least one node"
    assert max(report.released_s) <= RELEASE_LIMIT_S
    assert report.consistent, (report.credited_hops, report.answered)
