"""Streaming through the gateway vs transformers on one machine, in one run.

Starts a real tracker and three real node processes on loopback (layers 0–15
once, 15–30 twice, of the default model), waits for the recipe to be
certified, then measures greedy chat answers of up to 128 tokens:

  (a) transformers ``generate`` decode tokens/s on the whole model
  (b) decode tokens/s streamed through the gateway (HTTP + SSE, two node hops),
      measured at the client from the first streamed token to the last

in interleaved rounds (best of each), the gateway's time to first token, and
the failover stall: the node serving the second half is killed with SIGKILL
mid-stream and the time to the next token is reported (the answer must equal
the undisturbed one). Last line: ``ratio: X`` with X = (b)/(a).

``--threads N`` gives transformers and every node process N torch threads
(``OMP_NUM_THREADS``), the same on both sides; on a crowded machine 1 keeps
both from collapsing under oversubscribed thread barriers.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import torch

from app.demo.processes import Child, start_node, start_tracker
from core.models.default_model import ensure_default_model
from core.models.tokenizer import ChatTokenizer
from tests.support.node_lines import registered_node_id

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
            self.model.generate(
                self.ids,
                max_new_tokens=new_tokens,
                min_new_tokens=new_tokens,
                do_sample=False,
                attention_mask=torch.ones_like(self.ids),
            )
        return time.perf_counter() - began

    def decode_rate(self) -> float:
        """Decode tokens/s: the prefill (a 1-token generate) is subtracted."""
        prefill = min(self._timed(1) for _ in range(2))
        return (NEW_TOKENS - 1) / (self._timed(NEW_TOKENS) - prefill)


class StreamRun:
    """One streamed chat answer: text, token count, and when each piece arrived."""

    def __init__(self) -> None:
        self.began = time.perf_counter()
        self.stamps: list[float] = []
        self.text = ""
        self.tokens = 0
        self.route = ""

    @property
    def first_token_s(self) -> float:
        return self.stamps[0] - self.began

    @property
    def decode_rate(self) -> float:
        span = self.stamps[-1] - self.stamps[0]
        return (self.tokens - 1) / span if self.tokens > 1 and span > 0 else 0.0


def stream(url: str, model: str, *, kill_after: int = 0, nodes: dict[str, Child] | None = None,
           ) -> tuple[StreamRun, float | None]:  # fmt: skip
    """Stream one greedy answer; optionally SIGKILL the second hop after `kill_after` pieces."""
    body = {
        "model": model,
        "messages": [{"role": "user", "content": PROMPT}],
        "max_tokens": NEW_TOKENS,
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    run = StreamRun()
    killed_at: float | None = None
    with (
        httpx.Client(timeout=600, trust_env=False) as http,
        http.stream("POST", url + "/v1/chat/completions", json=body) as reply,
    ):
        reply.raise_for_status()
        run.route = reply.headers.get("X-Meshnet-Route", "")
        for line in reply.iter_lines():
            if not line.startswith("data: {"):
                continue
            event = json.loads(line[6:])
            if "error" in event:
                raise SystemExit(f"the stream failed: {event['error']['message']}")
            if event.get("usage"):
                run.tokens = int(event["usage"]["completion_tokens"])
            for choice in event["choices"]:
                if choice["delta"].get("content"):
                    run.text += choice["delta"]["content"]
                    run.stamps.append(time.perf_counter())
            if kill_after and nodes and killed_at is None and len(run.stamps) == kill_after:
                serving = run.route.split(",")[1].split(":")[0]
                nodes[serving].process.kill()
                killed_at = time.perf_counter()
    stall = None
    if killed_at is not None:
        after = [s for s in run.stamps if s > killed_at]
        stall = after[0] - killed_at if after else None
    return run, stall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, help="torch threads, here and in every node")
    parser.add_argument(
        "--audits",
        action="store_true",
        help="keep the tracker's hop audits on (benchmarks/audit_cost.py measures their cost)",
    )
    args = parser.parse_args()
    if not args.audits:
        # The gateway's own path: fresh nodes are on audit probation (a quarter of steps
        # replayed elsewhere), a cost measured on its own by benchmarks/audit_cost.py.
        os.environ["MESHNET_TRACKER_AUDIT_RATE"] = "0"
        os.environ["MESHNET_TRACKER_AUDIT_PROBATION_RATE"] = "0"
    print(f"hop audits: {'on' if args.audits else 'off (--audits turns them on)'}")
    if args.threads:
        torch.set_num_threads(args.threads)
        os.environ["OMP_NUM_THREADS"] = str(args.threads)  # the node processes inherit it
        print(f"torch threads: {args.threads} (transformers and each node)")
    model_dir = ensure_default_model()
    tokenizer = ChatTokenizer.from_folder(model_dir)
    prompt_ids = tokenizer.encode_chat([{"role": "user", "content": PROMPT}])
    print(f"model: {model_dir.name}, prompt {len(prompt_ids)} tokens, up to {NEW_TOKENS} new")

    reference = TransformersReference(model_dir, prompt_ids)
    workdir = Path(tempfile.mkdtemp(prefix="meshnet-bench-gateway-"))
    registered: dict[str, str] = {}

    def on_line(name: str, line: object) -> None:
        if (node_id := registered_node_id(line)) is not None:
            registered[name] = node_id

    tracker, url = start_tracker(workdir, on_line, heartbeat_s=1.0)
    children = [tracker]
    try:
        for index, layers in enumerate([(0, 15), (15, 30), (15, 30)], start=1):
            children.append(start_node(index, workdir, url, model_dir, layers, on_line))
        model = wait_for_model(url, registered)
        nodes = {registered[c.name]: c for c in children[1:]}
        stream(url, model)  # warm-up
        reference_rates: list[float] = []
        runs: list[StreamRun] = []
        for _ in range(ROUNDS):
            reference_rates.append(reference.decode_rate())
            runs.append(stream(url, model)[0])
        disturbed, stall = stream(url, model, kill_after=10, nodes=nodes)
    finally:
        for child in reversed(children):
            child.stop()

    best = max(runs, key=lambda r: r.decode_rate)
    best_reference = max(reference_rates)
    rounds = ", ".join(f"{r:.1f}" for r in reference_rates)
    print(f"transformers generate decode: {best_reference:.1f} tokens/s (rounds: {rounds})")
    rounds = ", ".join(f"{r.decode_rate:.1f}" for r in runs)
    print(
        f"gateway stream (2 node processes) decode: {best.decode_rate:.1f} tokens/s "
        f"over {best.tokens} tokens (rounds: {rounds})"
    )
    ttft = statistics.median(r.first_token_s for r in runs) * 1000
    print(f"gateway time to first token: {ttft:.0f} ms (median of {len(runs)})")
    gaps = [b - a for r in runs for a, b in zip(r.stamps, r.stamps[1:], strict=False)]
    same = "same answer" if disturbed.text == best.text else "DIFFERENT ANSWER"
    stall_text = f"{stall * 1000:.0f} ms" if stall is not None else "no token after the kill"
    print(
        f"failover stall after kill -9 of the serving node: {stall_text} to the next token "
        f"(median gap between tokens {statistics.median(gaps) * 1000:.0f} ms; {same})"
    )
    print(f"ratio: {best.decode_rate / best_reference:.2f}")


def wait_for_model(url: str, registered: dict[str, str], timeout_s: float = 300.0) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state: dict[str, Any] = httpx.get(url + "/api/v1/state", timeout=5).json()
        reachable = [n for n in state.get("nodes", []) if n.get("reachability") == "reachable"]
        models = httpx.get(url + "/v1/models", timeout=5).json().get("data", [])
        if models and len(registered) == 3 and len(reachable) == 3:
            return str(models[0]["id"])
        time.sleep(0.5)
    raise SystemExit("the model did not come up on the gateway in time")


if __name__ == "__main__":
    main()
