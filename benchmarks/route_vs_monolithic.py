"""Route through two node processes vs transformers on one machine, in one run.

Starts a real tracker and two real node processes on loopback (layers 0–15 and
15–30 of the default model), waits for the recipe to be certified, then
measures 128 greedy tokens:

  (a) transformers ``generate`` decode tokens/s on the whole model
  (b) the route's decode tokens/s (client → node 1 → node 2 → token)

and prints the per-hop overhead (step wall time minus the node's compute time,
p50), the route's decode rate near position 10 and near 1,000, and last
``ratio: X`` with X = (b)/(a).
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import torch

from app.demo.processes import start_node, start_tracker
from core.models.default_model import ensure_default_model
from core.models.tokenizer import ChatTokenizer
from core.route import RouteSession, hops_from_route

NEW_TOKENS = 128
PROMPT = "Write a short story about a lighthouse keeper who finds a message in a bottle."


def transformers_decode_rate(model_dir: Path, prompt_ids: list[int]) -> float:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    ids = torch.tensor([prompt_ids])

    def timed(new_tokens: int) -> float:
        began = time.perf_counter()
        with torch.inference_mode():
            out = model.generate(
                ids, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False
            )
        assert out.shape[1] == ids.shape[1] + new_tokens
        return time.perf_counter() - began

    timed(4)  # warm-up
    prefill = min(timed(1) for _ in range(2))
    full = timed(NEW_TOKENS)
    return (NEW_TOKENS - 1) / (full - prefill)


async def route_run(
    url: str, recipe: dict[str, Any], prompt_ids: list[int], new_tokens: int
) -> tuple[list[float], list[list[float]]]:
    """Per-decode-step wall times (s) and per-hop overheads (ms) for one generation."""
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        response = await http.post(
            "/api/v1/routes",
            json={
                "model_artifact_digest": recipe["model_artifact_digest"],
                "runtime_recipe_digest": recipe["runtime_recipe_digest"],
                "purpose": "serve",
            },
        )
        response.raise_for_status()
        route = response.json()
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
    overheads = [timing.overhead_ms()[1:] for timing in session.timings]  # decode steps only
    return steps, overheads


def main() -> None:
    model_dir = ensure_default_model()
    tokenizer = ChatTokenizer.from_folder(model_dir)
    prompt_ids = tokenizer.encode_chat([{"role": "user", "content": PROMPT}])
    print(f"model: {model_dir.name}, prompt {len(prompt_ids)} tokens, {NEW_TOKENS} new tokens")

    reference = transformers_decode_rate(model_dir, prompt_ids)

    workdir = Path(tempfile.mkdtemp(prefix="meshnet-bench-"))
    tracker, url = start_tracker(workdir, lambda _n, _l: None, heartbeat_s=1.0)
    children = [tracker]
    try:
        for index, layers in enumerate([(0, 15), (15, 30)], start=1):
            children.append(start_node(index, workdir, url, model_dir, layers, lambda _n, _l: None))
        recipe = wait_for_certified(url)
        asyncio.run(route_run(url, recipe, prompt_ids, 8))  # warm-up
        steps, overheads = asyncio.run(route_run(url, recipe, prompt_ids, NEW_TOKENS))
        long_prompt = (prompt_ids * (1000 // len(prompt_ids) + 1))[:990]
        long_steps, _ = asyncio.run(route_run(url, recipe, long_prompt, 21))
    finally:
        for child in reversed(children):
            child.stop()

    route_rate = len(steps) / sum(steps)
    near_10 = 1 / statistics.median(steps[:20])
    near_1000 = 1 / statistics.median(long_steps)
    print(f"transformers generate decode: {reference:.1f} tokens/s")
    print(f"route (2 node processes) decode: {route_rate:.1f} tokens/s")
    for index, hop in enumerate(overheads, start=1):
        print(f"hop {index} overhead p50: {statistics.median(hop):.2f} ms")
    print(f"route decode near position 10: {near_10:.1f} tokens/s")
    print(f"route decode near position 1000: {near_1000:.1f} tokens/s")
    print(f"rate near 1000 / near 10: {near_1000 / near_10:.2f}")
    print(f"ratio: {route_rate / reference:.2f}")


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
