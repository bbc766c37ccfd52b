"""A game starts: seconds from a pause to the shard's memory given back, on two models.

    python benchmarks/pause_release.py [--workdir DIR] [--large-workdir DIR]
                                       [--pauses 2] [--pause-after 4] [--new-tokens 48]
                                       [--skip-large] [--small]
                                       [--large-layers-total 32] [--large-ranges 0:11,...]

For the default model (two node processes, layers split in two, the default
recipe) and then for Llama 3 8B's shape in ``llama-q4`` (the model and the three
shards of ``benchmarks/large_model.py``, built once under ``--large-workdir``):
a real tracker with its gateway and real ``meshnet-node run --control stdin``
children (the app's way of running its node), started one after another. Each
round a greedy ``/v1/completions`` stream runs through the route; once
``--pause-after`` tokens have arrived, ``pause`` goes down node 1's control pipe
(what a pause rule or the tray sends). Node 1 holds layers from 0, the embedding
with them: on the 8B shape, the largest of the three shards. On a loaded machine,
``--large-layers-total 12 --large-ranges 0:11,11:12`` serves the very same first
shard (the embedding and 11 layers of the 8B shape) with one small node after it,
instead of two more 11-layer nodes to load.

Measured per pause: ``memory_released_s`` and ``sessions_ended_s`` from the
node's own ``paused`` event (the clock runs inside the node, from the command's
arrival to the memory given back: docs/churn.md), and the node process's
resident memory (VmRSS) just before the pause and once it said ``paused``; then
what the open answer got (no other node holds node 1's layers here, so it gets
the documented 503, never an answer presented as finished). The node is resumed
(it proves its layers again) before the next round.

The last line: ``memory released: default model max X s, 8B-shape q4 shard max Y s
(target 2 s)``. The CUDA caching allocator's part (``torch.cuda.empty_cache``)
runs only on a GPU: ``benchmarks/gpu_check.py`` measures it there.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.demo.processes import split_layers, start_tracker
from benchmarks.large_model import GB, PROMPT_IDS, SMALL, Shape, build_model, wait_for_model
from core.models.default_model import ensure_default_model
from core.models.manifest import ModelManifest
from tests.support.node_child import NodeChild

TARGET_S = 2.0


@dataclass
class Pause:
    """One pause of node 1 with an answer open through it."""

    released_s: float
    ended_s: float
    rss_before: int
    rss_after: int
    answer: str  # what the open answer's client got


@dataclass
class Stream:
    """A greedy completion streamed on a thread: tokens so far and how it ended."""

    tokens: int = 0
    ended: str = ""
    done: threading.Event = field(default_factory=threading.Event)


def vm_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def stream_completion(url: str, model: str, new_tokens: int, into: Stream) -> None:
    body = {
        "model": model,
        "prompt": PROMPT_IDS,
        "max_tokens": new_tokens,
        "temperature": 0,
        "stream": True,
    }
    try:
        with (
            httpx.Client(base_url=url, timeout=600, trust_env=False) as client,
            client.stream("POST", "/v1/completions", json=body) as response,
        ):
            if response.status_code != 200:
                response.read()
                into.ended = f"{response.status_code} {_code(response.text)}"
                return
            for line in response.iter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                chunk = json.loads(line[len("data: ") :])
                if "error" in chunk:
                    into.ended = f"error event {_code(json.dumps(chunk))}"
                elif chunk.get("choices"):
                    into.tokens += 1
                    finish = chunk["choices"][0].get("finish_reason")
                    into.ended = f"finished ({finish})" if finish else into.ended
    except httpx.HTTPError as exc:
        into.ended = f"connection error: {exc}"
    finally:
        into.done.set()


def _code(text: str) -> str:
    """The reason code of an error body (``route_failed``, ``no_live_route``...)."""
    try:
        error = json.loads(text).get("error", {})
    except ValueError:
        return text[:80]
    return str(error.get("code") or error.get("type") or error)


def pause_once(url: str, model: str, node: NodeChild, args: argparse.Namespace) -> Pause:
    stream = Stream()
    thread = threading.Thread(
        target=stream_completion, args=(url, model, args.new_tokens, stream), daemon=True
    )
    thread.start()
    deadline = time.monotonic() + args.timeout_s
    while stream.tokens < args.pause_after:
        if stream.done.is_set() or time.monotonic() > deadline:
            raise SystemExit(f"the answer ended before the pause: {stream.ended!r}")
        time.sleep(0.01)
    before = vm_rss(node.process.pid)
    node.send("pause")
    # wait_state reads the child's events in order: the next "paused" is this pause's
    paused = node.wait_state("paused", timeout_s=args.timeout_s)
    after = vm_rss(node.process.pid)
    stream.done.wait(args.timeout_s)
    data = paused["data"]
    answer = f"{stream.ended} after {stream.tokens} tokens"
    return Pause(
        float(data["memory_released_s"]), float(data["sessions_ended_s"]), before, after, answer
    )


def measure(
    name: str,
    model_dir: Path,
    ranges: list[tuple[int, int]],
    recipe: str | None,
    args: argparse.Namespace,
) -> list[Pause]:
    nodes = len(ranges)
    print(
        f"{name}: {model_dir.name}, {nodes} node processes "
        + " ".join(f"[{a},{b})" for a, b in ranges)
        + f", recipe {recipe or 'default'}; node 1 [{ranges[0][0]},{ranges[0][1]}) is paused",
        flush=True,
    )
    run_dir = Path(tempfile.mkdtemp(prefix="pause-", dir=args.workdir))
    tracker, url = start_tracker(run_dir, lambda _n, _l: None, heartbeat_s=1.0)
    children: list[NodeChild] = []
    pauses: list[Pause] = []
    try:
        for index, (start, end) in enumerate(ranges, start=1):
            home = run_dir / f"node-{index}"
            extra = ["--layers", f"{start}:{end}", *(["--recipe", recipe] if recipe else [])]
            child = NodeChild(home, url, model_dir, *extra, log_path=run_dir / f"node-{index}.log")
            children.append(child)
            child.wait_state("serving", timeout_s=args.timeout_s)
        model = wait_for_model(url, nodes, timeout_s=args.timeout_s)
        first = children[0]
        for round_ in range(1, args.pauses + 1):
            pause = pause_once(url, model, first, args)
            pauses.append(pause)
            print(
                f"  pause {round_}: memory released {pause.released_s:.3f} s (sessions ended "
                f"{pause.ended_s:.3f} s); node 1 resident {pause.rss_before / GB:.2f} GB before, "
                f"{pause.rss_after / GB:.2f} GB once paused "
                f"({(pause.rss_before - pause.rss_after) / GB:.2f} GB given back); "
                f"the open answer: {pause.answer}",
                flush=True,
            )
            if round_ < args.pauses:
                first.send("resume")
                first.wait_state("serving", timeout_s=args.timeout_s)
                wait_for_model(url, nodes, timeout_s=args.timeout_s)
    finally:
        for child in children:
            if child.process.poll() is None:
                child.send("stop")
        for child in children:
            try:
                child.exit_code(60)
            except Exception:
                child.kill()
        tracker.stop()
    released = sorted(p.released_s for p in pauses)
    print(
        f"  {name}: memory released p50 {statistics.median(released):.3f} s, "
        f"max {released[-1]:.3f} s (n={len(released)})",
        flush=True,
    )
    return pauses


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path, default=None, help="run files")
    parser.add_argument("--large-workdir", type=Path, default=None, help="the 8B model's cache")
    parser.add_argument("--pauses", type=int, default=2, help="pauses of node 1 per model")
    parser.add_argument("--pause-after", type=int, default=4, help="tokens before the pause")
    parser.add_argument("--new-tokens", type=int, default=48)
    parser.add_argument("--skip-large", action="store_true", help="the default model only")
    parser.add_argument("--small", action="store_true", help="large_model's small shape")
    parser.add_argument(
        "--large-layers-total",
        type=int,
        default=None,
        help="layers of the 8B-shaped model (32); fewer keeps node 1's shard and shortens the rest",
    )
    parser.add_argument(
        "--large-ranges",
        default=None,
        help="the nodes' layers, e.g. 0:11,11:12 (default: large_model's even split in three)",
    )
    parser.add_argument("--timeout-s", type=float, default=1800.0)
    return parser.parse_args(argv)


def ranges_from(text: str | None, layer_count: int, nodes: int) -> list[tuple[int, int]]:
    if not text:
        return split_layers(layer_count, nodes)
    pairs = [part.split(":") for part in text.split(",")]
    return [(int(a), int(b)) for a, b in pairs]


def main() -> None:
    args = parse()
    os.environ["MESHNET_TRACKER_AUDIT_RATE"] = "0"  # audits replay hops; their cost: audit_cost.py
    os.environ["MESHNET_TRACKER_AUDIT_PROBATION_RATE"] = "0"
    os.environ["MESHNET_TRACKER_GATEWAY_STEP_TIMEOUT_S"] = "300"
    args.workdir = args.workdir or Path(tempfile.mkdtemp(prefix="meshnet-bench-pause-"))
    args.workdir.mkdir(parents=True, exist_ok=True)
    default_dir = ensure_default_model()
    default_ranges = split_layers(ModelManifest.load(default_dir).layer_count, 2)
    default = measure("default model", default_dir, default_ranges, None, args)
    summary = f"default model max {max(p.released_s for p in default):.3f} s"
    if not args.skip_large:
        shape = SMALL if args.small else Shape()
        if args.large_layers_total is not None:
            shape = replace(shape, layers=args.large_layers_total)
        large_dir, _built = build_model(args.large_workdir or args.workdir, shape)
        label = "small-shape q4 shard" if args.small else "8B-shape q4 shard"
        ranges = ranges_from(args.large_ranges, shape.layers, 3)
        large = measure(label, large_dir, ranges, "llama-q4", args)
        summary += f", {label} max {max(p.released_s for p in large):.3f} s"
    print(f"memory released: {summary} (target {TARGET_S:g} s)")


if __name__ == "__main__":
    main()
