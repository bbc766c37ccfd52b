"""Route through two node processes vs transformers on one machine, in one run.

Starts a real tracker and two real node processes on loopback (layers 0–15 and
15–30 of the default model), waits for the recipe to be certified, then
measures 128 greedy tokens:

  (a) transformers ``generate`` decode tokens/s on the whole model
  (b) the route's decode tokens/s (client → node 1 → node 2 → token)

in interleaved rounds (best of each), and prints the per-hop overhead (step
wall time minus the node's compute time, p50), the route's decode rate near
position 10 and near 1,000, and last ``ratio: X`` with X = (b)/(a).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script

from app.demo.processes import start_node, start_tracker
from core.models.default_model import ensure_default_model
from core.models.tokenizer import ChatTokenizer
from tests.support.route import RouteSession, hops_from_route, request_route

NEW_TOKENS = 128
ROUNDS = 3  # interleaved, best of each: this shared machine's speed drifts over minutes
PROMPT = "Write a short story about a lighthouse keeper who finds a message in a bottle."


class TransformersReference:
    """transformers ``generate`` on the whole model, in this process."""

    def __init__(self, model_dir: Path, prompt_ids: list[int]) -> None:
        from transformers import AutoModelForCausalLM

        self.model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
        self.ids = torch.tensor([prompt_ids])
        self._timed(4)  # warm-up

    def _timed(self, new_tokens: int) -> float:
        began = time.perf_counter()
        with torch.inference_mode():
            out = self.model.generate(
                self.ids, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False
            )
        assert out.shape[1] == self.ids.shape[1] + new_tokens
        return time.perf_counter() - began

    def decode_rate(self) -> float:
        """Decode tokens/s: the prefill (a 1-token generate) is subtracted."""
        prefill = min(self._timed(1) for _ in range(2))
        return (NEW_TOKENS - 1) / (self._timed(NEW_TOKENS) - prefill)


async def route_run(
    url: str, recipe: dict[str, Any], prompt_ids: list[int], new_tokens: int
) -> tuple[list[float], list[tuple[list[float], list[float]]]]:
    """Per-decode-step wall times (s) and per-hop compute and overhead times (ms)."""
    route = await request_route(url, recipe)
    hops = hops_from_route(route)
    steps: list[float] = []
    max_length = len(prompt_ids) + new_tokens + 1
    async with RouteSession(hops, route["ticket"], max_length=max_length) as session:
        token = await session.step(prompt_ids)
        for _ in range(new_tokens - 1):
            began = time.perf_counter()
            token = await session.step([token])
            steps.append(time.perf_counter() - began)
        await session.close()
    # Decode steps only (index 0 is the prefill): (compute, overhead) per hop.
    per_hop = [(t.compute_ms[1:], t.overhead_ms()[1:]) for t in session.timings]
    return steps, per_hop


def main() -> None:
    model_dir = ensure_default_model()
    tokenizer = ChatTokenizer.from_folder(model_dir)
    prompt_ids = tokenizer.encode_chat([{"role": "user", "content": PROMPT}])
    print(f"model: {model_dir.name}, prompt {len(prompt_ids)} tokens, {NEW_TOKENS} new tokens")

    reference = TransformersReference(model_dir, prompt_ids)
    workdir = Path(tempfile.mkdtemp(prefix="meshnet-bench-"))
    tracker, url = start_tracker(workdir, lambda _n, _l: None, heartbeat_s=1.0)
    children = [tracker]
    try:
        for index, layers in enumerate([(0, 15), (15, 30)], start=1):
            children.append(start_node(index, workdir, url, model_dir, layers, lambda _n, _l: None))
        recipe = wait_for_certified(url)
        asyncio.run(route_run(url, recipe, prompt_ids, 8))  # warm-up
        long_prompt = (prompt_ids * (1000 // len(prompt_ids) + 1))[:990]
        reference_rates, runs, long_runs = [], [], []
        for _ in range(ROUNDS):
            reference_rates.append(reference.decode_rate())
            runs.append(asyncio.run(route_run(url, recipe, prompt_ids, NEW_TOKENS)))
            long_runs.append(asyncio.run(route_run(url, recipe, long_prompt, 21))[0])
    finally:
        for child in reversed(children):
            child.stop()

    steps, per_hop = max(runs, key=lambda run: len(run[0]) / sum(run[0]))
    route_rate = len(steps) / sum(steps)
    best_reference = max(reference_rates)
    # Best round of each, like the throughput figures: drift on this machine is one-sided.
    near_10 = max(1 / statistics.median(st[:20]) for st, _ in runs)
    near_1000 = max(1 / statistics.median(st) for st in long_runs)
    rounds = ", ".join(f"{r:.1f}" for r in reference_rates)
    print(f"transformers generate decode: {best_reference:.1f} tokens/s (rounds: {rounds})")
    rounds = ", ".join(f"{len(st) / sum(st):.1f}" for st, _ in runs)
    print(f"route (2 node processes) decode: {route_rate:.1f} tokens/s (rounds: {rounds})")
    for index, (compute, overhead) in enumerate(per_hop, start=1):
        print(
            f"hop {index} compute p50: {statistics.median(compute):.2f} ms, "
            f"overhead p50: {statistics.median(overhead):.2f} ms"
        )
    print(f"route decode near position 10: {near_10:.1f} tokens/s")
    print(f"route decode near position 1000: {near_1000:.1f} tokens/s")
    print(f"rate near 1000 / near 10: {near_1000 / near_10:.2f}")
    print(f"ratio: {route_rate / best_reference:.2f}")


def wait_for_certified(url: str, timeout_s: float = 240.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state = httpx.get(url + "/api/v1/state", timeout=5).json()
        for recipe in state.get("recipes", []):
            if recipe["status"] == "certified":
                return dict(recipe)
        time.sleep(0.5)
    raise SystemExit("the recipe was not certified in time")


if __name__ == "__main__":
    main()
