"""Many chats at once through the gateway: 8 concurrent chats vs 1, same run, from outside.

    python benchmarks/gateway_concurrency.py [--chats 8] [--new-tokens 64] [--rounds 2]

Starts a real tracker (with its gateway) and two real node processes on
loopback (layers 0–15 and 15–30 of the default model, fp32), waits until the
model is served, then drives the gateway with the official ``openai`` client
(streaming, temperature 0, ``max_tokens`` new tokens) in interleaved rounds,
best of each since other load on the machine only ever slows a round:

  (a) one chat alone: decode tokens/s from its first streamed token to its last;
  (b) N chats at once, each its own prompt: aggregate decode tokens/s = all
      decode tokens / the wall time from the first chat's first token to the
      last chat's last token.

This is the gateway's side of ``benchmarks/concurrent_sessions.py`` (which
drives the nodes' data plane directly): the difference between the two is
what the gateway path costs (tokenizing, sampling, per-step messaging, the
event loop). Each node's mean decode batch over the (b) rounds is read from
its ``/v1/health``; every answer is checked against its solo run. Hop audits
are off as in gateway_vs_transformers.py (their cost: audit_cost.py). Where a
decode token's time goes is read from the gateway's own request log lines
(``in_route_per_token``: inside the route's steps, the hops' compute and the
legs to them; ``between_steps_per_token``: sampling, detokenizing, the stream's
write and the client's reading, the gateway path's own share). Last line
``ratio: X`` = (b) aggregate / (a) tokens/s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.demo.processes import start_node, start_tracker
from core.dataplane.tls import pinned_client_context
from core.models.default_model import ensure_default_model

PROMPTS = [
    "Write a short story about a lighthouse keeper who finds a message in a bottle.",
    "Explain how bread rises.",
    "List five facts about the Moon, one per line.",
    "What is a computer network? Answer in two paragraphs for a child.",
    "Describe Paris to someone who has never been to France.",
    "Give me a recipe for pancakes.",
    "Why is the sky blue?",
    "Write a poem about autumn leaves falling in a quiet park at dusk.",
]


@dataclass
class Chat:
    """One streamed answer: its text, completion tokens, and when each piece arrived."""

    text: str = ""
    tokens: int = 0
    stamps: list[float] = field(default_factory=list)

    @property
    def decode_rate(self) -> float:
        span = self.stamps[-1] - self.stamps[0]
        return (self.tokens - 1) / span if self.tokens > 1 and span > 0 else 0.0


async def one_chat(client: Any, model: str, prompt: str, new_tokens: int) -> Chat:
    chat = Chat()
    stream = await client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": prompt}],
        max_tokens=new_tokens,
        temperature=0,
        stream=True,
        stream_options={"include_usage": True},
    )
    async for chunk in stream:
        if chunk.usage is not None:
            chat.tokens = chunk.usage.completion_tokens
        for choice in chunk.choices:
            if choice.delta.content:
                chat.text += choice.delta.content
                chat.stamps.append(time.perf_counter())
    return chat


async def chats(url: str, model: str, prompts: list[str], new_tokens: int) -> list[Chat]:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=url + "/v1", api_key="benchmark", max_retries=0, timeout=600)
    try:
        answers = (one_chat(client, model, prompt, new_tokens) for prompt in prompts)
        return list(await asyncio.gather(*answers))
    finally:
        await client.close()


def aggregate_rate(group: list[Chat]) -> float:
    first = min(c.stamps[0] for c in group)
    last = max(c.stamps[-1] for c in group)
    return sum(c.tokens - 1 for c in group) / (last - first)


SPLIT = re.compile(r"in_route_per_token=([0-9.]+)ms between_steps_per_token=([0-9.]+)ms")


class RequestLog:
    """The gateway's per-request lines from the tracker's output: each decode token's split."""

    def __init__(self) -> None:
        self.splits: list[tuple[float, float]] = []

    def __call__(self, _name: str, line: dict[str, object] | str) -> None:
        if (found := SPLIT.search(str(line))) is not None:  # a JSON line's message too
            self.splits.append((float(found.group(1)), float(found.group(2))))


def split_text(splits: list[tuple[float, float]]) -> str:
    if not splits:
        return "no request lines seen"
    route = statistics.fmean(s[0] for s in splits)
    between = statistics.fmean(s[1] for s in splits)
    return f"{route:.1f} ms in the route, {between:.2f} ms between steps"


def decode_counts(health_urls: list[str]) -> list[tuple[int, int]]:
    """Each node's (decode forwards, decode rows) so far, over its pinned TLS data plane."""
    context = pinned_client_context()  # the gateway checks the pin; here counts are all we read
    bodies = [httpx.get(u, timeout=10, verify=context).json() for u in health_urls]
    return [(int(b["decode_forwards"]), int(b["decode_rows"])) for b in bodies]


def wait_for_model(url: str, nodes: int, timeout_s: float = 300.0) -> tuple[str, list[str]]:
    """The served model's id and the nodes' health URLs, once every node is reachable."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state: dict[str, Any] = httpx.get(url + "/api/v1/state", timeout=5).json()
        reachable = [n for n in state.get("nodes", []) if n.get("reachability") == "reachable"]
        models = httpx.get(url + "/v1/models", timeout=5).json().get("data", [])
        if models and len(reachable) == nodes:
            reachable.sort(key=lambda n: int(n["shard_start"]))
            health = [n["endpoint"].replace("ws", "http", 1) + "/v1/health" for n in reachable]
            return str(models[0]["id"]), health
        time.sleep(0.5)
    raise SystemExit("the model did not come up on the gateway in time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chats", type=int, default=8, choices=range(2, len(PROMPTS) + 1))
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    n, count = args.new_tokens, args.chats
    prompts = PROMPTS[:count]
    os.environ["MESHNET_TRACKER_AUDIT_RATE"] = "0"
    os.environ["MESHNET_TRACKER_AUDIT_PROBATION_RATE"] = "0"

    model_dir = ensure_default_model()
    print(
        f"model: {model_dir.name}, fp32, two node processes [0,15) + [15,30), "
        f"{count} chats through the gateway (openai client, streaming), {n} new tokens each"
    )
    workdir = Path(tempfile.mkdtemp(prefix="meshnet-bench-gwc-"))
    requests = RequestLog()
    tracker, url = start_tracker(workdir, requests, heartbeat_s=1.0)
    children = [tracker]
    try:
        for index, layers in enumerate([(0, 15), (15, 30)], start=1):
            children.append(start_node(index, workdir, url, model_dir, layers, lambda _n, _l: None))
        model, health = wait_for_model(url, nodes=2)
        solo = [asyncio.run(chats(url, model, [p], n))[0].text for p in prompts]  # also warms up
        singles: list[Chat] = []
        groups: list[list[Chat]] = []
        batched = [[0, 0] for _ in health]  # forwards, rows over the (b) rounds, per node
        single_lines: list[tuple[float, float]] = []
        group_lines: list[tuple[float, float]] = []
        for _ in range(args.rounds):
            mark = len(requests.splits)
            singles.append(asyncio.run(chats(url, model, prompts[:1], n))[0])
            single_lines += requests.splits[mark:]
            before = decode_counts(health)
            mark = len(requests.splits)
            groups.append(asyncio.run(chats(url, model, prompts, n)))
            group_lines += requests.splits[mark:]
            for total, was, now in zip(batched, before, decode_counts(health), strict=True):
                total[0] += now[0] - was[0]
                total[1] += now[1] - was[1]
    finally:
        for child in reversed(children):
            child.stop()

    identical = all([c.text for c in g] == solo for g in groups) and all(
        s.text == solo[0] for s in singles
    )
    single_rates = [s.decode_rate for s in singles]
    group_rates = [aggregate_rate(g) for g in groups]
    best_group = groups[group_rates.index(max(group_rates))]
    print(
        f"1 chat: {max(single_rates):.1f} tokens/s decode "
        f"(rounds: {', '.join(f'{r:.1f}' for r in single_rates)})"
    )
    print(
        f"{count} chats at once: {max(group_rates):.1f} tokens/s aggregate decode "
        f"(rounds: {', '.join(f'{r:.1f}' for r in group_rates)})"
    )
    print(
        "  tokens per chat: "
        + ", ".join(str(c.tokens) for c in best_group)
        + f"; p50 per-chat decode rate {statistics.median(c.decode_rate for c in best_group):.1f}"
    )
    print(
        f"mean decode batch over the {count}-chat rounds (steps / forwards): "
        + ", ".join(
            f"node {i} {rows / max(forwards, 1):.2f} ({rows}/{forwards})"
            for i, (forwards, rows) in enumerate(batched, start=1)
        )
    )
    print(
        "per decode token, from the gateway's request lines (mean over requests): "
        f"1 chat {split_text(single_lines)}; {count} chats {split_text(group_lines)}"
    )
    print(f"every answer equals its solo run: {identical}")
    print(f"ratio: {max(group_rates) / max(single_rates):.2f}")


if __name__ == "__main__":
    main()
