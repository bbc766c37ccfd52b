"""Decode speed over WAN-like links: every node and the gateway behind a delay proxy.

    python benchmarks/wan_decode.py --link-ms 25 --nodes 3 [--jitter-ms 0] [--new-tokens 48]

The kernel here has no ``netem``, so the delay is a userspace TCP proxy
(benchmarks/link_delay_proxy.py, one process): each node's data plane listens
on 127.0.0.1:P and advertises ``ws://127.0.0.2:P``, where the proxy holds every
chunk for the one-way delay before passing it on, both ways; the gateway's
HTTP port is proxied the same way and the client streams through it. So every
leg (client↔gateway, gateway↔each node) pays the delay, and a new connection
pays a handshake round trip.

Starts a real tracker and ``--nodes`` real node processes (the default model's
layers split evenly), waits for the recipe to be certified, then streams greedy
chat answers through the gateway and reports, per route design:

  (a) star: the gateway sends each step to each hop and gets it back (2 × nodes legs);
  (b) chain: the gateway sends a step to the first hop, each hop passes its hidden
      states to its successor over its own link, the last answers the gateway
      (nodes + 1 legs; docs/wire.md#chained-hops);
  (c) chain + speculative decoding: each round trip verifies prompt-lookup drafts
      (tracker_service/gateway/drafting.py), several tokens a step;
  (s) star + speculative decoding.

The ratio printed last is (c)/(a). All four run on the same tracker and nodes,
chosen per request with the gateway's extensions ``"chain"`` and ``"speculative"``,
and must give the same greedy text; the tracker's request log says which shape
each route ran as. The proxies' connection and byte counts are printed, to
show the legs crossed them, and (a) is also run with the proxies' delay
switched off, in interleaved rounds on the same route, so the time the links
add per token is measured against the ``2 × nodes × link`` legs it should cost.
The tracker's request log gives how many drafted tokens the route kept.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.demo.processes import Child, child_env, free_port, split_layers, start_node, start_tracker
from core.models.default_model import ensure_default_model

PROXY_HOST = "127.0.0.2"  # all of 127/8 is loopback on Linux: the proxies' own address
PROMPTS = {
    # free writing: the answer repeats little of its context, so drafts are rarely found
    "story": "Write a short story about a lighthouse keeper who finds a message in a bottle.",
    # an edit: the answer copies most of its input, as code edits and rewrites do
    "edit": (
        "Fix the spelling in this paragraph and write the whole paragraph out again: "
        "'The old lighthouse keeper climed the stairs every evening at sunset. He cleaned "
        "the great lamp, checked the oil, and wached the ships pass in the dark water. "
        "One morning he found a bottle on the rocks, and inside it was a leter.'"
    ),
}


@dataclass
class StreamRun:
    """One streamed answer: its text, token count, and when each piece arrived."""

    began: float = field(default_factory=time.perf_counter)
    stamps: list[float] = field(default_factory=list)
    text: str = ""
    tokens: int = 0
    route: str = ""

    @property
    def first_token_s(self) -> float:
        return self.stamps[0] - self.began

    @property
    def decode_rate(self) -> float:
        span = self.stamps[-1] - self.stamps[0]
        return (self.tokens - 1) / span if self.tokens > 1 and span > 0 else 0.0


def stream_star(
    gateway: str, model: str, prompt: str, new_tokens: int, temperature: float = 0.0
) -> StreamRun:
    """(a) the star route: a streamed chat answer, one token a step."""
    return _stream(gateway, model, prompt, new_tokens, temperature, speculative=False, chain=False)


def stream_chain(
    gateway: str, model: str, prompt: str, new_tokens: int, temperature: float = 0.0
) -> StreamRun:
    """(b) the same nodes as a chain: each hop passes its output to the next."""
    return _stream(gateway, model, prompt, new_tokens, temperature, speculative=False, chain=True)


def stream_chain_speculative(
    gateway: str, model: str, prompt: str, new_tokens: int, temperature: float = 0.0
) -> StreamRun:
    """(c) the chain, each step verifying the gateway's drafts (``auto``)."""
    return _stream(gateway, model, prompt, new_tokens, temperature, speculative=True, chain=True)


def stream_star_speculative(
    gateway: str, model: str, prompt: str, new_tokens: int, temperature: float = 0.0
) -> StreamRun:
    """(s) the star, each step verifying the gateway's drafts."""
    return _stream(gateway, model, prompt, new_tokens, temperature, speculative=True, chain=False)


def _stream(
    gateway: str,
    model: str,
    prompt: str,
    new_tokens: int,
    temperature: float,
    *,
    speculative: bool,
    chain: bool,
) -> StreamRun:
    body = {
        "model": model,
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": new_tokens,
        "temperature": temperature,
        "stream": True,
        "stream_options": {"include_usage": True},
        "speculative": speculative,
        "chain": chain,  # false: the gateway runs the route as a star
    }
    run = StreamRun()
    with (
        httpx.Client(timeout=600, trust_env=False) as http,
        http.stream("POST", gateway + "/v1/chat/completions", json=body) as reply,
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
    if not run.stamps:
        raise SystemExit("the stream ended without a token")
    return run


Variant = Callable[[str, str, str, int, float], StreamRun]
VARIANTS: list[tuple[str, Variant | None]] = [
    ("(a) star", stream_star),
    ("(b) chain", stream_chain),
    ("(c) chain + speculative decoding", stream_chain_speculative),
    ("(s) star + speculative decoding", stream_star_speculative),
]
DRAFTS = re.compile(r"drafted=(\d+) accepted=(\d+)")
SHAPES = re.compile(r"shape=(chain|star)")


def star_name() -> str:
    return VARIANTS[0][0]


def draft_counts(tracker_log: Path) -> tuple[int, int]:
    """Tokens drafted and kept over every request in the tracker's log."""
    drafted = kept = 0
    for match in DRAFTS.finditer(tracker_log.read_text(errors="replace")):
        drafted += int(match.group(1))
        kept += int(match.group(2))
    return drafted, kept


class Links:
    """The proxy process and what it reports: ready, then per-link counts at exit."""

    def __init__(self, workdir: Path, delay_ms: float, jitter_ms: float, links: list[str]) -> None:
        self.ready = False
        self.delay_ms: float | None = None  # the last switch the process confirmed
        self.stats: dict[str, dict[str, int]] = {}
        argv = [sys.executable, str(Path(__file__).with_name("link_delay_proxy.py"))]
        argv += ["--delay-ms", str(delay_ms), "--jitter-ms", str(jitter_ms)]
        for spec in links:
            argv += ["--link", spec]
        self.child = Child("links", argv, child_env(), workdir / "links.log", self._line)
        deadline = time.monotonic() + 30
        while not self.ready:
            if self.child.exited is not None or time.monotonic() > deadline:
                raise SystemExit(f"the delay proxies did not start; see {workdir / 'links.log'}")
            time.sleep(0.05)

    def _line(self, _name: str, line: dict[str, object] | str) -> None:
        if isinstance(line, dict) and "ready" in line:
            self.ready = True
        if isinstance(line, dict) and isinstance(line.get("delay_ms"), float | int):
            self.delay_ms = float(line["delay_ms"])  # type: ignore[arg-type]
        if isinstance(line, dict) and isinstance(line.get("links"), dict):
            self.stats = line["links"]  # type: ignore[assignment]

    def delayed(self, on: bool, delay_ms: float) -> None:
        """Switch every link's delay off (a same-run reference) or back on, and wait for it."""
        want = delay_ms if on else 0.0
        self.delay_ms = None
        self.child.process.send_signal(signal.SIGUSR2 if on else signal.SIGUSR1)
        deadline = time.monotonic() + 30
        while self.delay_ms != want:
            if time.monotonic() > deadline:
                raise SystemExit("the delay proxies did not confirm the delay switch")
            time.sleep(0.02)

    def stop(self) -> None:
        self.child.stop()


def median_gap_ms(runs: list[StreamRun]) -> float:
    gaps = [b - a for r in runs for a, b in zip(r.stamps, r.stamps[1:], strict=False)]
    return statistics.median(gaps) * 1000 if gaps else 0.0


def wait_for_model(url: str, nodes: int, timeout_s: float = 600.0) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state: dict[str, Any] = httpx.get(url + "/api/v1/state", timeout=10).json()
        reachable = [n for n in state.get("nodes", []) if n.get("reachability") == "reachable"]
        models = httpx.get(url + "/v1/models", timeout=10).json().get("data", [])
        if models and len(reachable) >= nodes:
            return str(models[0]["id"])
        time.sleep(1.0)
    raise SystemExit("the model did not come up on the gateway in time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--link-ms", type=float, required=True, help="one-way delay of each leg")
    parser.add_argument("--jitter-ms", type=float, default=0.0, help="extra uniform 0..J ms")
    parser.add_argument("--nodes", type=int, default=3, help="route length (layers split evenly)")
    parser.add_argument("--new-tokens", type=int, default=48)
    parser.add_argument(
        "--prompt", choices=sorted(PROMPTS), default="story", help="what the answer is"
    )
    parser.add_argument("--temperature", type=float, default=0.0, help="0: greedy (texts compared)")
    parser.add_argument("--rounds", type=int, default=2, help="measured answers (best of)")
    parser.add_argument("--threads", type=int, help="torch threads in every node")
    args = parser.parse_args()
    if args.link_ms < 0 or args.jitter_ms < 0 or args.nodes < 1 or args.rounds < 1:
        parser.error("--link-ms and --jitter-ms must be ≥ 0, --nodes and --rounds ≥ 1")
    # Decode speed of the route itself: hop audits are measured by benchmarks/audit_cost.py.
    os.environ["MESHNET_TRACKER_AUDIT_RATE"] = "0"
    os.environ["MESHNET_TRACKER_AUDIT_PROBATION_RATE"] = "0"
    if args.threads:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)  # the node processes inherit it

    model_dir = ensure_default_model()
    layer_count = int(json.loads((model_dir / "config.json").read_text())["num_hidden_layers"])
    layers = split_layers(layer_count, args.nodes)
    print(
        f"model: {model_dir.name}, {args.nodes} node processes "
        + " ".join(f"[{a},{b})" for a, b in layers)
        + f", up to {args.new_tokens} new tokens, "
        + (f"temperature {args.temperature:g}" if args.temperature else "greedy")
        + f", hop audits off, prompt: {args.prompt}"
    )
    prompt = PROMPTS[args.prompt]
    print(
        f"link: {args.link_ms:g} ms one-way (+ up to {args.jitter_ms:g} ms jitter) on every "
        "leg: client↔gateway and gateway↔each node, via userspace delay proxies"
    )

    workdir = Path(tempfile.mkdtemp(prefix="meshnet-bench-wan-"))
    tracker, url = start_tracker(workdir, lambda _n, _l: None, heartbeat_s=1.0)
    children: list[Child] = [tracker]
    links: Links | None = None
    runs: dict[str, list[StreamRun]] = {}
    reference: list[StreamRun] = []  # the star with the links' delay off, same run
    try:
        tracker_port = int(urlsplit(url).port or 0)
        node_ports = [free_port() for _ in layers]
        specs = [f"gateway={PROXY_HOST}:{tracker_port}=127.0.0.1:{tracker_port}"]
        specs += [
            f"node{i}={PROXY_HOST}:{port}=127.0.0.1:{port}"
            for i, port in enumerate(node_ports, start=1)
        ]
        links = Links(workdir, args.link_ms, args.jitter_ms, specs)
        for i, (span, port) in enumerate(zip(layers, node_ports, strict=True), start=1):
            extra = ["--port", str(port), "--advertise-host", PROXY_HOST]
            children.append(
                start_node(i, workdir, url, model_dir, span, lambda _n, _l: None, extra)
            )
        model = wait_for_model(url, args.nodes)
        gateway = f"http://{PROXY_HOST}:{tracker_port}"
        for name, variant in VARIANTS:
            if variant is None:
                continue
            variant(gateway, model, prompt, args.new_tokens, args.temperature)  # warm-up
            runs[name] = []
            for _ in range(args.rounds):
                if variant is stream_star:
                    # Interleaved: this shared machine's speed drifts between rounds.
                    links.delayed(False, args.link_ms)
                    reference.append(
                        variant(gateway, model, prompt, args.new_tokens, args.temperature)
                    )
                    links.delayed(True, args.link_ms)
                runs[name].append(
                    variant(gateway, model, prompt, args.new_tokens, args.temperature)
                )
    finally:
        if links is not None:
            links.stop()
        for child in reversed(children):
            child.stop()

    legs = 2 * args.nodes
    floor_ms = legs * args.link_ms
    texts: dict[str, str] = {}
    for name, variant in VARIANTS:
        if variant is None:
            print(f"{name}: not implemented")
            continue
        done = runs[name]
        best = max(done, key=lambda r: r.decode_rate)
        rates = ", ".join(f"{r.decode_rate:.2f}" for r in done)
        ttft = statistics.median(r.first_token_s for r in done) * 1000
        print(
            f"{name}: decode {best.decode_rate:.2f} tokens/s over {best.tokens} tokens "
            f"(rounds: {rates}), time to first token {ttft:.0f} ms (median of {len(done)}), "
            f"route {best.route}"
        )
        if variant is stream_star and reference:
            base = max(reference, key=lambda r: r.decode_rate)
            with_links, without = median_gap_ms(done), median_gap_ms(reference)
            print(
                f"    same route, delay off (interleaved rounds): decode {base.decode_rate:.2f} "
                f"tokens/s (rounds: {', '.join(f'{r.decode_rate:.2f}' for r in reference)})"
            )
            print(
                f"    median time per token: {with_links:.0f} ms with the links, {without:.0f} ms "
                f"without: the links add {with_links - without:.0f} ms per token "
                f"(expected {legs} legs × {args.link_ms:g} ms = {floor_ms:g} ms)"
            )
        if not args.temperature and len({r.text for r in done}) != 1:
            print(f"    WARNING: {name} gave different greedy texts across rounds")
        texts[name] = best.text
    ran = list(texts)
    if args.temperature:
        print("sampled answers: texts differ run to run, so they are not compared")
    elif len(ran) > 1:
        same = len(set(texts.values())) == 1
        print(f"identical greedy text across {', '.join(ran)}: {same}")
    else:
        print(f"identical greedy text across variants: only {ran[0]} ran, nothing to compare")
    logged = SHAPES.findall((workdir / "tracker.log").read_text(errors="replace"))
    print(
        f"route shapes in the tracker's request log: chain {logged.count('chain')}, "
        f"star {logged.count('star')} (warm-ups and delay-off rounds included)"
    )
    if "(b) chain" in runs and star_name() in runs:
        chained, starred = median_gap_ms(runs["(b) chain"]), median_gap_ms(runs[star_name()])
        print(
            f"    median time per token: chain {chained:.0f} ms, star {starred:.0f} ms "
            f"(the chain saves {args.nodes - 1} legs × {args.link_ms:g} ms = "
            f"{(args.nodes - 1) * args.link_ms:g} ms a step)"
        )
    drafted, kept = draft_counts(workdir / "tracker.log")
    if drafted:
        print(
            f"speculative steps: {kept} of {drafted} drafted tokens kept "
            f"({kept / drafted:.0%}), warm-ups included"
        )
    if links is not None and links.stats:
        print(
            "delay proxies: "
            + ", ".join(
                f"{n} {s['connections']} connections / {s['bytes'] / 1e6:.2f} MB"
                for n, s in sorted(links.stats.items())
            )
        )
    star = VARIANTS[0][0]
    target = next((n for n, _ in VARIANTS if n.startswith("(c)") and n in runs), None)
    target = target or next((n for n, _ in VARIANTS if n.startswith("(s)") and n in runs), None)
    if star in runs and target is not None:
        slowest = max(r.decode_rate for r in runs[star])
        faster = max(r.decode_rate for r in runs[target])
        print(f"ratio of decode tokens/s, {target.split(')')[0]})/(a):")
        print(f"ratio: {faster / slowest:.2f}")


if __name__ == "__main__":
    main()
