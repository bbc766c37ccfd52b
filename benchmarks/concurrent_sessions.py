"""Many chats at once through one two-node route: 8 concurrent sessions vs 1, same run.

    python benchmarks/concurrent_sessions.py [--sessions 8] [--new-tokens 32] [--rounds 2]

Starts a real tracker and two real node processes on loopback (layers 0–15 and
15–30 of the default model, fp32), waits for the recipe to be certified, then,
in interleaved rounds (best of each, since other load on the machine only ever
slows a round):

  (a) one session alone: decode tokens/s and its p50 token latency;
  (b) N sessions at once, each its own route session with its own prompt
      (different lengths, so different positions), all decoding together:
      aggregate decode tokens/s = all decode tokens / the wall time from the
      first decode step's start to the last one's end, and each session's p50
      token latency.

Each node batches the decode steps that reach it together into one forward
(core/dataplane/batcher.py); each node's mean decode batch over the (b) rounds
(decode steps / forwards, from its /v1/health) shows whether the sessions stayed
in one batch (8 for 8 sessions) or drifted into groups, whatever the machine's
load. Every session's greedy tokens are checked against its own solo run. Last
line ``ratio: X`` = (b) aggregate / (a) tokens/s.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.demo.processes import start_node, start_tracker
from core.dataplane.tls import pinned_client_context
from core.models.default_model import ensure_default_model
from core.models.tokenizer import ChatTokenizer
from tests.support.route import RouteSession, hops_from_route, request_route

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


class Run:
    """One session's tokens and decode step times (start, end) in perf_counter seconds."""

    def __init__(self) -> None:
        self.tokens: list[int] = []
        self.steps: list[tuple[float, float]] = []

    @property
    def p50_ms(self) -> float:
        return statistics.median(e - s for s, e in self.steps) * 1000


async def one_session(url: str, recipe: dict[str, Any], ids: list[int], n: int) -> Run:
    route = await request_route(url, recipe)
    run = Run()
    async with RouteSession(
        hops_from_route(route), route["ticket"], max_length=len(ids) + n + 1
    ) as session:
        token = await session.step(ids)
        run.tokens.append(token)
        for _ in range(n - 1):
            began = time.perf_counter()
            token = await session.step([token])
            run.steps.append((began, time.perf_counter()))
            run.tokens.append(token)
        await session.close()
    return run


async def together(url: str, recipe: dict[str, Any], prompts: list[list[int]], n: int) -> list[Run]:
    return list(await asyncio.gather(*(one_session(url, recipe, ids, n) for ids in prompts)))


def aggregate_rate(runs: list[Run]) -> float:
    first = min(r.steps[0][0] for r in runs)
    last = max(r.steps[-1][1] for r in runs)
    return sum(len(r.steps) for r in runs) / (last - first)


def decode_counts(health_urls: list[str]) -> list[tuple[int, int]]:
    """Each node's (decode forwards, decode rows) so far."""
    context = pinned_client_context()  # the nodes serve TLS; counts are all that is read here
    bodies = [httpx.get(u, timeout=10, verify=context).json() for u in health_urls]
    return [(int(b["decode_forwards"]), int(b["decode_rows"])) for b in bodies]


def wait_for_certified(url: str, timeout_s: float = 240.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for recipe in httpx.get(url + "/api/v1/state", timeout=5).json().get("recipes", []):
            if recipe["status"] == "certified":
                return dict(recipe)
        time.sleep(0.5)
    raise SystemExit("the recipe was not certified in time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=8, choices=range(2, len(PROMPTS) + 1))
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    n, count = args.new_tokens, args.sessions

    model_dir = ensure_default_model()
    tokenizer = ChatTokenizer.from_folder(model_dir)
    prompts = [tokenizer.encode_chat([{"role": "user", "content": p}]) for p in PROMPTS[:count]]
    print(
        f"model: {model_dir.name}, fp32, two node processes [0,15) + [15,30), {count} sessions, "
        f"prompts {min(map(len, prompts))}–{max(map(len, prompts))} tokens, {n} new tokens each"
    )
    workdir = Path(tempfile.mkdtemp(prefix="meshnet-bench-"))
    tracker, url = start_tracker(workdir, lambda _n, _l: None, heartbeat_s=1.0)
    children = [tracker]
    try:
        for index, layers in enumerate([(0, 15), (15, 30)], start=1):
            children.append(start_node(index, workdir, url, model_dir, layers, lambda _n, _l: None))
        recipe = wait_for_certified(url)
        hops = hops_from_route(asyncio.run(request_route(url, recipe)))
        health = [h.endpoint.replace("ws", "http", 1) + "/v1/health" for h in hops]
        solo = [asyncio.run(one_session(url, recipe, ids, n)).tokens for ids in prompts]
        singles: list[Run] = []
        groups: list[list[Run]] = []
        batched = [[0, 0] for _ in hops]  # forwards, rows over the (b) rounds, per node
        for _ in range(args.rounds):
            singles.append(asyncio.run(one_session(url, recipe, prompts[0], n)))
            before = decode_counts(health)
            groups.append(asyncio.run(together(url, recipe, prompts, n)))
            for total, was, now in zip(batched, before, decode_counts(health), strict=True):
                total[0] += now[0] - was[0]
                total[1] += now[1] - was[1]
    finally:
        for child in reversed(children):
            child.stop()

    identical = all([r.tokens for r in g] == solo for g in groups)
    single_rates = [len(r.steps) / (r.steps[-1][1] - r.steps[0][0]) for r in singles]
    group_rates = [aggregate_rate(g) for g in groups]
    best_single = singles[single_rates.index(max(single_rates))]
    best_group = groups[group_rates.index(max(group_rates))]
    print(
        f"1 session: {max(single_rates):.1f} tokens/s decode "
        f"(rounds: {', '.join(f'{r:.1f}' for r in single_rates)}), "
        f"p50 token latency {best_single.p50_ms:.1f} ms"
    )
    print(
        f"{count} sessions at once: {max(group_rates):.1f} tokens/s aggregate decode "
        f"(rounds: {', '.join(f'{r:.1f}' for r in group_rates)})"
    )
    print(
        "  p50 token latency per session: "
        + ", ".join(f"{r.p50_ms:.1f}" for r in best_group)
        + " ms"
    )
    print(
        f"mean decode batch over the {count}-session rounds (steps / forwards): "
        + ", ".join(
            f"node {i} {rows / max(forwards, 1):.2f} ({rows}/{forwards})"
            for i, (forwards, rows) in enumerate(batched, start=1)
        )
    )
    print(f"every session's tokens equal its solo run: {identical}")
    print(f"ratio: {max(group_rates) / max(single_rates):.2f}")


if __name__ == "__main__":
    main()
