"""A shared ~1,000-token system prompt: time to first token of a second request vs the first.

    python benchmarks/prefix_cache.py [--rounds 3] [--new-tokens 16] [--system-tokens 1000]

Starts a real tracker and two real node processes on loopback (layers 0–15 and
15–30 of the default model, fp32), waits for the recipe to be certified, then
in each round sends two chats that share one system prompt of about
``--system-tokens`` tokens and differ in the user's question, each through its
own route session (route request, open, prefill: the time to first token is
all of it, as a client waits for it):

  first   the system prompt is new to the nodes (each round starts it with its
          round number, so no round finds an earlier one's blocks);
  second  the same system prompt, another question: each node takes the blocks
          it already holds from its prefix cache (core/runtime/prefix_cache.py)
          and computes the rest.

Every answer's greedy tokens are checked against the same prompt generated in
this process by the same layers without any cache. Printed per round: both
times and the prompt positions every hop took from its cache; then the median
of each over the rounds; last line ``ratio: X`` = first / second (target >= 3).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.demo.processes import start_node, start_tracker
from benchmarks.concurrent_sessions import wait_for_certified
from core.models.default_model import ensure_default_model
from core.models.tokenizer import ChatTokenizer
from core.runtime import SamplingParams, Shard, generate_local
from tests.support.route import RouteSession, hops_from_route, request_route

RULES = [
    "Answer in plain language a child could follow, and never invent facts.",
    "When a question is ambiguous, say which reading you answer before answering it.",
    "Quote numbers with their units, and round them to at most three significant digits.",
    "Keep every answer under one hundred words unless the user asks for more detail.",
    "Refuse politely to help with anything dangerous, and say briefly why you refuse.",
    "If you do not know an answer, say so and suggest where the user might look instead.",
    "Use the metric system first, then give imperial units in brackets where they help.",
    "Write dates as day, month name and year, and times in the twenty-four hour clock.",
]
QUESTIONS = ["What is the boiling point of water?", "How far away is the Moon?"]


def system_prompt(tokenizer: ChatTokenizer, tokens: int) -> str:
    """House rules, numbered, until the system message alone is about ``tokens`` long."""
    lines: list[str] = ["You are the help desk assistant of a public library."]
    while len(tokenizer.encode("\n".join(lines))) < tokens:
        n = len(lines)
        lines.append(f"Rule {n}: {RULES[n % len(RULES)]}")
    return "\n".join(lines)


@dataclass
class Answer:
    ttft_s: float
    cached: int  # prompt positions every hop took from its cache
    tokens: list[int]


async def ask(url: str, recipe: dict[str, Any], ids: list[int], n: int) -> Answer:
    began = time.perf_counter()
    route = await request_route(url, recipe)
    async with RouteSession(
        hops_from_route(route), route["ticket"], max_length=len(ids) + n + 1
    ) as session:
        token = await session.step(ids)
        ttft = time.perf_counter() - began
        cached = min(session.cached)
        tokens = [token]
        for _ in range(n - 1):
            tokens.append(await session.step([tokens[-1]]))
        await session.close()
    return Answer(ttft, cached, tokens)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--new-tokens", type=int, default=16)
    parser.add_argument("--system-tokens", type=int, default=1000)
    args = parser.parse_args()
    n = args.new_tokens

    model_dir = ensure_default_model()
    tokenizer = ChatTokenizer.from_folder(model_dir)
    system = system_prompt(tokenizer, args.system_tokens)

    def chat(round_: int, question: str) -> list[int]:
        messages = [
            {"role": "system", "content": f"Round {round_}. {system}"},
            {"role": "user", "content": question},
        ]
        return tokenizer.encode_chat(messages)

    prompts = [[chat(r, q) for q in QUESTIONS] for r in range(args.rounds)]
    print(
        f"model: {model_dir.name}, fp32, two node processes [0,15) + [15,30); system prompt "
        f"{len(tokenizer.encode(system))} tokens, prompts {len(prompts[0][0])} and "
        f"{len(prompts[0][1])} tokens, {n} new tokens each, {args.rounds} rounds"
    )
    shards = [Shard.load(model_dir, 0, 15), Shard.load(model_dir, 15, 30)]
    reference = [
        [list(generate_local(shards, ids, n, SamplingParams())) for ids in pair] for pair in prompts
    ]
    del shards
    workdir = Path(tempfile.mkdtemp(prefix="meshnet-bench-"))
    tracker, url = start_tracker(workdir, lambda _n, _l: None, heartbeat_s=1.0)
    children = [tracker]
    answers: list[tuple[Answer, Answer]] = []
    try:
        for index, layers in enumerate([(0, 15), (15, 30)], start=1):
            children.append(start_node(index, workdir, url, model_dir, layers, lambda _n, _l: None))
        recipe = wait_for_certified(url)
        for r, (first_ids, second_ids) in enumerate(prompts):
            first = asyncio.run(ask(url, recipe, first_ids, n))
            second = asyncio.run(ask(url, recipe, second_ids, n))
            answers.append((first, second))
            print(
                f"round {r + 1}: first {first.ttft_s * 1000:.0f} ms (cached {first.cached}), "
                f"second {second.ttft_s * 1000:.0f} ms (cached {second.cached} of "
                f"{len(second_ids)})"
            )
    finally:
        for child in reversed(children):
            child.stop()

    identical = all(
        [a.tokens for a in pair] == want for pair, want in zip(answers, reference, strict=True)
    )
    first_ms = statistics.median(a.ttft_s for a, _ in answers) * 1000
    second_ms = statistics.median(b.ttft_s for _, b in answers) * 1000
    print(f"every answer's tokens equal the uncached in-process run: {identical}")
    print(f"first request, time to first token (median): {first_ms:.0f} ms")
    print(f"second request, time to first token (median): {second_ms:.0f} ms")
    print(f"ratio: {first_ms / second_ms:.2f}")


if __name__ == "__main__":
    main()
