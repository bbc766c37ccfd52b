"""A model no single node holds: Llama 3 8B's shape, random weights, three node processes.

    python benchmarks/large_model.py [--workdir DIR] [--recipe llama-q4] [--nodes 3]
                                     [--new-tokens 8] [--rounds 2]
    python benchmarks/large_model.py --small      # the same run on a small shape

Builds once (cached under ``--workdir``; reused when its manifest is there) a
model folder a node accepts: a ``LlamaForCausalLM`` config.json in Llama 3
8B's shape (hidden 4096, 32 layers, MLP 14336, 32 heads with 8 KV heads, RoPE
theta 500000, vocabulary 128256, untied head), random bfloat16 weights written
one safetensors file per layer with an index (so building holds one layer in
memory, never the 16 GB), the default model's ``tokenizer.json`` (its 49,152
ids fit the vocabulary; ids above it decode to nothing) and the MeshNet
manifest. ``--small`` (or the shape options) builds a small model of the same
kind, to check the script in a minute.

Then starts a real tracker (with its gateway) and ``--nodes`` real node
processes on loopback, each serving an even share of the layers with the
recipe (``llama-q4``: 4-bit weight groups, int8 LM head and embedding). The
nodes start one after another, each once the one before serves, so only one
loads at a time. Measured per node:

  - load time: process start to serving, from its JSON state events, and the
    doctor's own split from the capability report it saved (reading and
    quantizing the weights; the test forward), with the shard's weight bytes;
  - resident memory: the process's VmRSS once serving and after generating,
    and VmHWM, its peak (reached while loading: a shard reads its layers in
    float32 before quantizing them);

and through the route, from outside: ``/v1/completions`` on the gateway with
a token-id prompt at temperature 0, ``--new-tokens`` new tokens and one new
token in each round; seconds per generated token = (time for N - time for 1)
/ (N - 1), best of ``--rounds``.

The reference, the whole model in one process, cannot be run here; that is the
point. So the reference printed is the bytes the whole model needs in float32,
and the last line is ``ratio: X`` = sum of the nodes' resident bytes (after
generating) / the whole model's float32 bytes. Available memory is sampled
through the run; below ``--min-available-gb`` the nodes are stopped and the
run ends without a ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.demo.processes import Child, split_layers, start_node, start_tracker
from core.models.default_model import ensure_default_model
from core.models.manifest import MANIFEST_NAME, ModelManifest

GB = 1e9
INDEX_NAME = "model.safetensors.index.json"
PROMPT_IDS = [504, 3458, 282, 4649, 314, 7042, 30, 378, 1345, 5422, 281, 260, 1911, 282, 2114, 30]


@dataclass(frozen=True)
class Shape:
    """A Llama's sizes; the defaults are Llama 3 8B's."""

    layers: int = 32
    hidden: int = 4096
    intermediate: int = 14336
    heads: int = 32
    kv_heads: int = 8
    vocab: int = 128256
    rope_theta: float = 500000.0

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def model_id(self) -> str:
        return f"random-llama-{self.layers}x{self.hidden}-{self.intermediate}-v{self.vocab}"

    def layer_tensors(self, i: int) -> list[tuple[str, tuple[int, ...]]]:
        p, H, kv = f"model.layers.{i}.", self.hidden, self.kv_heads * self.head_dim
        return [
            (p + "input_layernorm.weight", (H,)),
            (p + "self_attn.q_proj.weight", (self.heads * self.head_dim, H)),
            (p + "self_attn.k_proj.weight", (kv, H)),
            (p + "self_attn.v_proj.weight", (kv, H)),
            (p + "self_attn.o_proj.weight", (H, self.heads * self.head_dim)),
            (p + "post_attention_layernorm.weight", (H,)),
            (p + "mlp.gate_proj.weight", (self.intermediate, H)),
            (p + "mlp.up_proj.weight", (self.intermediate, H)),
            (p + "mlp.down_proj.weight", (H, self.intermediate)),
        ]

    def files(self) -> list[list[tuple[str, tuple[int, ...]]]]:
        """The tensors of each safetensors file: the embedding, one per layer, the head."""
        embed: list[tuple[str, tuple[int, ...]]] = [
            ("model.embed_tokens.weight", (self.vocab, self.hidden))
        ]
        head: list[tuple[str, tuple[int, ...]]] = [
            ("model.norm.weight", (self.hidden,)),
            ("lm_head.weight", (self.vocab, self.hidden)),
        ]
        return [embed, *(self.layer_tensors(i) for i in range(self.layers)), head]

    @property
    def parameters(self) -> int:
        return sum(_numel(shape) for tensors in self.files() for _, shape in tensors)

    def config(self) -> dict[str, Any]:
        return {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "vocab_size": self.vocab,
            "hidden_size": self.hidden,
            "intermediate_size": self.intermediate,
            "num_hidden_layers": self.layers,
            "num_attention_heads": self.heads,
            "num_key_value_heads": self.kv_heads,
            "head_dim": self.head_dim,
            "rms_norm_eps": 1e-5,
            "rope_theta": self.rope_theta,
            "rope_scaling": None,
            "max_position_embeddings": 8192,
            "tie_word_embeddings": False,
            "hidden_act": "silu",
            "attention_bias": False,
            "mlp_bias": False,
            # the default model's tokenizer: <|im_start|> and <|im_end|>
            "bos_token_id": 1,
            "eos_token_id": 2,
            "torch_dtype": "bfloat16",
        }


SMALL = Shape(layers=6, hidden=512, intermediate=1792, heads=8, kv_heads=2)


def _numel(shape: tuple[int, ...]) -> int:
    count = 1
    for dim in shape:
        count *= dim
    return count


def build_model(root: Path, shape: Shape, seed: int = 0) -> tuple[Path, float | None]:
    """The model folder under ``root`` and the seconds building it took (None: cached).

    Written in a staging folder renamed at the end, so a run killed half-way
    leaves nothing that looks complete."""
    import torch
    from safetensors.torch import save_file

    folder = root / shape.model_id
    if (folder / MANIFEST_NAME).is_file():
        if json.loads((folder / "config.json").read_text()) == shape.config():
            return folder, None
        shutil.rmtree(folder)
    began = time.perf_counter()
    staging = root / f".{shape.model_id}.staging"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    (staging / "config.json").write_text(json.dumps(shape.config(), indent=2) + "\n")
    tokenizer = ensure_default_model() / "tokenizer.json"
    shutil.copyfile(tokenizer, staging / "tokenizer.json")
    (staging / "tokenizer_config.json").write_text(
        json.dumps({"bos_token": "<|im_start|>", "eos_token": "<|im_end|>"}) + "\n"
    )
    generator = torch.Generator().manual_seed(seed)
    files = shape.files()
    weight_map: dict[str, str] = {}
    total = 0
    for k, tensors in enumerate(files, start=1):
        name = f"model-{k:05d}-of-{len(files):05d}.safetensors"
        block: dict[str, torch.Tensor] = {}
        for tensor_name, tensor_shape in tensors:
            if tensor_name.endswith("norm.weight"):
                block[tensor_name] = torch.ones(tensor_shape, dtype=torch.bfloat16)
            else:
                values = torch.randn(tensor_shape, generator=generator, dtype=torch.bfloat16)
                block[tensor_name] = values.mul_(0.02)
            weight_map[tensor_name] = name
            total += block[tensor_name].numel() * 2
        save_file(block, str(staging / name), metadata={"format": "pt"})
        del block
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (staging / INDEX_NAME).write_text(json.dumps(index, indent=2) + "\n")
    ModelManifest.build(
        staging,
        model_id=shape.model_id,
        revision=f"random-bf16-seed-{seed}",
        architecture="LlamaForCausalLM",
        layer_count=shape.layers,
        source={"kind": "random", "seed": seed},
    ).write(staging)
    staging.rename(folder)
    return folder, time.perf_counter() - began


# -- watching the nodes ------------------------------------------------------------------


def proc_status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of a process, in bytes."""
    found: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) * 1024
    return found


def available_bytes() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    raise SystemExit("no MemAvailable in /proc/meminfo")


class MemoryWatch:
    """Samples available memory; below the floor it says so and stops the children."""

    def __init__(self, floor_bytes: int, children: list[Child]) -> None:
        self.floor, self.children = floor_bytes, children
        self.lowest = available_bytes()
        self.tripped = threading.Event()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(0.5):
            self.lowest = min(self.lowest, available_bytes())
            if self.lowest < self.floor and not self.tripped.is_set():
                self.tripped.set()
                print(
                    f"available memory fell to {self.lowest / GB:.1f} GB "
                    f"(floor {self.floor / GB:.1f} GB): stopping the nodes",
                    flush=True,
                )
                for child in reversed(self.children):
                    child.stop(timeout_s=5)

    def stop(self) -> None:
        self._done.set()
        self._thread.join(2)


@dataclass
class NodeRun:
    """One node child: when it reached each state, and its last plain lines."""

    index: int
    layers: tuple[int, int]
    began: float = field(default_factory=time.monotonic)
    states: dict[str, float] = field(default_factory=dict)
    failure: str | None = None
    tail: list[str] = field(default_factory=list)
    child: Child | None = None
    weight_bytes: int = 0

    def on_line(self, _name: str, line: dict[str, object] | str) -> None:
        if isinstance(line, str):
            self.tail = [*self.tail[-9:], line]
            return
        state = line.get("state")
        if line.get("kind") == "state" and isinstance(state, str):
            self.states.setdefault(state, time.monotonic())
            if state in ("refused", "error"):
                self.failure = f"{state}: {line.get('message')} [{line.get('reason')}]"

    def since_start(self, state: str) -> float:
        return self.states[state] - self.began

    def wait_serving(self, watch: MemoryWatch, timeout_s: float) -> None:
        assert self.child is not None
        deadline = time.monotonic() + timeout_s
        while "serving" not in self.states:
            if self.failure or self.child.exited is not None or watch.tripped.is_set():
                tail = "\n  ".join(self.tail)
                raise SystemExit(f"node {self.index} did not serve: {self.failure}\n  {tail}")
            if time.monotonic() > deadline:
                raise SystemExit(f"node {self.index} did not serve within {timeout_s:.0f} s")
            time.sleep(0.2)


def capability_report(home: Path) -> dict[str, Any]:
    """The capability report the node's doctor saved: its load and probe times, weight bytes."""
    reports = sorted((home / "reports").glob("*.json"))
    if len(reports) != 1:
        raise SystemExit(f"expected one capability report in {home / 'reports'}, found {reports}")
    report: dict[str, Any] = json.loads(reports[0].read_text())
    return report


def wait_for_model(url: str, nodes: int, timeout_s: float) -> str:
    """The served model's id once every node is reachable and the gateway lists it."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state: dict[str, Any] = httpx.get(url + "/api/v1/state", timeout=10).json()
        reachable = [n for n in state.get("nodes", []) if n.get("reachability") == "reachable"]
        models = httpx.get(url + "/v1/models", timeout=10).json().get("data", [])
        if models and len(reachable) == nodes:
            return str(models[0]["id"])
        time.sleep(1.0)
    raise SystemExit("the model did not come up on the gateway in time")


def complete(client: httpx.Client, model: str, max_tokens: int) -> tuple[float, int]:
    """(seconds, completion tokens) of one greedy completion of the token-id prompt."""
    body = {"model": model, "prompt": PROMPT_IDS, "max_tokens": max_tokens, "temperature": 0}
    began = time.perf_counter()
    response = client.post("/v1/completions", json=body)
    elapsed = time.perf_counter() - began
    response.raise_for_status()
    return elapsed, int(response.json()["usage"]["completion_tokens"])


# -- the run -----------------------------------------------------------------------------


def shape_from(args: argparse.Namespace) -> Shape:
    base = SMALL if args.small else Shape()
    overrides = {
        "layers": args.layers_total,
        "hidden": args.hidden,
        "intermediate": args.intermediate,
        "heads": args.heads,
        "kv_heads": args.kv_heads,
        "vocab": args.vocab,
    }
    values = {**base.__dict__, **{k: v for k, v in overrides.items() if v is not None}}
    return Shape(**values)


def describe(shape: Shape) -> str:
    return (
        f"hidden {shape.hidden}, {shape.layers} layers, MLP {shape.intermediate}, "
        f"{shape.heads} heads / {shape.kv_heads} KV heads, rope theta {shape.rope_theta:g}, "
        f"vocab {shape.vocab}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path, default=None, help="model cache and run files")
    parser.add_argument("--recipe", default="llama-q4")
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--new-tokens", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--small", action="store_true", help="a small shape, to check the script")
    for option in ("--layers-total", "--hidden", "--intermediate", "--heads", "--kv-heads"):
        parser.add_argument(option, type=int, default=None)
    parser.add_argument("--vocab", type=int, default=None)
    parser.add_argument("--min-available-gb", type=float, default=3.0)
    parser.add_argument("--node-timeout-s", type=float, default=1800.0)
    args = parser.parse_args()
    shape = shape_from(args)
    n = args.new_tokens
    os.environ["MESHNET_TRACKER_AUDIT_RATE"] = "0"  # audits replay hops; their cost: audit_cost.py
    os.environ["MESHNET_TRACKER_AUDIT_PROBATION_RATE"] = "0"
    os.environ["MESHNET_TRACKER_GATEWAY_STEP_TIMEOUT_S"] = "300"
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="meshnet-bench-large-"))
    workdir.mkdir(parents=True, exist_ok=True)

    model_dir, build_s = build_model(workdir, shape)
    disk = sum(p.stat().st_size for p in model_dir.glob("*.safetensors"))
    files = len(list(model_dir.glob("*.safetensors")))
    built = "cached" if build_s is None else f"built in {build_s:.0f} s"
    print(f"model: {model_dir.name} ({describe(shape)})")
    print(
        f"  random bfloat16 weights: {shape.parameters / 1e9:.2f} B parameters, "
        f"{disk / GB:.2f} GB in {files} safetensors files ({built}, {model_dir})"
    )
    ranges = split_layers(shape.layers, args.nodes)
    print(
        f"recipe {args.recipe}, {args.nodes} node processes "
        + " ".join(f"[{a},{b})" for a, b in ranges)
        + f", started one after another; machine memory {_total_memory() / GB:.1f} GB, "
        f"{available_bytes() / GB:.1f} GB available",
        flush=True,
    )

    run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=workdir))
    tracker, url = start_tracker(run_dir, lambda _n, _l: None, heartbeat_s=1.0)
    children = [tracker]
    watch = MemoryWatch(int(args.min_available_gb * GB), children)
    runs: list[NodeRun] = []
    try:
        for index, layers in enumerate(ranges, start=1):
            run = NodeRun(index, layers)
            run.child = start_node(
                index, run_dir, url, model_dir, layers, run.on_line, recipe_id=args.recipe
            )
            children.append(run.child)
            runs.append(run)
            run.wait_serving(watch, args.node_timeout_s)
            status = proc_status(run.child.process.pid)
            report = capability_report(run_dir / f"node-{index}")
            run.weight_bytes = int(report["memory"]["weight_bytes"])
            timings = report["timings"]
            print(
                f"node {index} [{layers[0]},{layers[1]}): serving "
                f"{run.since_start('serving'):.1f} s after start (its doctor: load "
                f"{timings['load_s']:.1f} s, test forward {timings['probe_s']:.1f} s); weights "
                f"{run.weight_bytes / GB:.2f} GB, resident {status['VmRSS'] / GB:.2f} GB, "
                f"peak {status['VmHWM'] / GB:.2f} GB",
                flush=True,
            )
        model = wait_for_model(url, args.nodes, timeout_s=600)
        singles: list[tuple[float, int]] = []
        fulls: list[tuple[float, int]] = []
        with httpx.Client(base_url=url, timeout=1800, trust_env=False) as client:
            complete(client, model, 1)  # warm-up: the gateway fetches the tokenizer
            for _ in range(args.rounds):
                singles.append(complete(client, model, 1))
                fulls.append(complete(client, model, n))
        after = [proc_status(r.child.process.pid) for r in runs if r.child is not None]
    finally:
        watch.stop()
        for child in reversed(children):
            child.stop()
    if watch.tripped.is_set():
        raise SystemExit("stopped: not enough memory left")

    per_token = [
        (full - one) / (tokens - 1)
        for (one, _), (full, tokens) in zip(singles, fulls, strict=True)
        if tokens > 1
    ]
    whole = [full / tokens for full, tokens in fulls]
    print(
        f"gateway /v1/completions, {len(PROMPT_IDS)}-token id prompt, temperature 0, "
        f"{args.rounds} rounds: {n} new tokens in "
        + ", ".join(f"{t:.2f} s ({k} tokens)" for t, k in fulls)
        + "; 1 new token in "
        + ", ".join(f"{t:.2f} s" for t, _ in singles)
    )
    resident = sum(s["VmRSS"] for s in after)
    print(
        "resident after generating: "
        + ", ".join(
            f"node {r.index} {s['VmRSS'] / GB:.2f} GB (peak {s['VmHWM'] / GB:.2f})"
            for r, s in zip(runs, after, strict=True)
        )
        + f"; sum {resident / GB:.2f} GB (weights {sum(r.weight_bytes for r in runs) / GB:.2f} GB)"
    )
    print(f"lowest available memory during the run: {watch.lowest / GB:.1f} GB")
    fp32 = shape.parameters * 4
    print(
        f"reference (not runnable: no single process here holds it): the whole model in "
        f"float32 is {fp32 / GB:.1f} GB ({shape.parameters / 1e9:.2f} B parameters x 4 bytes)"
    )
    if per_token:
        print(
            f"seconds per token: {min(per_token):.3f} decode (best of "
            + ", ".join(f"{s:.3f}" for s in per_token)
            + f"), {min(whole):.3f} over the whole {n}-token request with its prefill"
        )
    print(f"ratio: {resident / fp32:.3f}")


def _total_memory() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    return 0


if __name__ == "__main__":
    main()
