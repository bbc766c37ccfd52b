"""Gamers come and go: users' chats through the gateway while contributors pause, resume,
stop and crash, on real node processes of the default model behind delayed links.

    python benchmarks/churn.py [--nodes 6] [--link-ms 20] [--clients 4] [--minutes 5]
                               [--events-per-minute 6] [--max-tokens 16] [--seed 1]

The nodes split the model into two ranges, each held by half of them (at least five
nodes, so every range keeps a replacement). Every link to a node and to the gateway
crosses a userspace delay proxy (tests/support/churn_network.py). First each prompt
is answered undisturbed (the reference, and a baseline time); then ``--clients``
threads chat without pause for ``--minutes`` while a driver, ``--events-per-minute``
times a minute, pauses a serving node (the owner starts a game), resumes a paused
one, stops one cleanly (the app's Quit) or ``kill -9``s one (a crash, a pulled
cable) — never the last available node of a range — and restarts a stopped or
killed node after ``--restart-s``. Once, at 40 % of the run, it pauses every node
of the first range together for ``--hold-s`` (then only a 503 can be right).

It prints the requests answered, failed, and answered with the 503 of no route (a
503 while a replacement existed counts as failed); the greedy answers that differ
from the undisturbed ones; the p50/p95 extra time of a disturbed request (one that
ran while an event happened) over the median undisturbed request of its prompt; the
p50/p95 seconds from a pause to the shard's memory released, as each node measured
it; whether the ledger's credited hops equal two per answered request (every route
has two hops, a failed-over request is credited once); and last ``failed requests:
N of M, memory released p95: X s``.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.models.default_model import ensure_default_model
from tests.support.churn_network import ChurnNetwork, Member

PROMPTS = [
    "Name three colours.",
    "Count from one to ten, in words.",
    "What is the capital of France?",
    "Write one sentence about the sea.",
]
RETRY_WAIT_S = 2.0  # how long a client waits after a 503 (Retry-After says 5 s at most)
GRACE_S = 4.0  # a node serving this long is routable (registered, reachability dialled)
LAYERS = 30  # the default model's


@dataclass
class Outcome:
    prompt: int
    started: float
    ended: float
    kind: str  # answered, differs, no-route, failed
    detail: str = ""


@dataclass
class Report:
    requests: int
    answered: int
    failed: int
    no_route: int
    differs: int
    extra_s: list[float]
    released_s: list[float]
    ended_s: list[float]  # pause → the node's sessions ended (the first part of released_s)
    credited_hops: int
    unpaid_closes: int  # route closes where a hop gave no receipt (it left meanwhile)
    failovers: int  # routes dropped mid-answer: their hops are paid the steps they verified
    events: dict[str, int]
    failures: list[str] = field(default_factory=list)

    @property
    def consistent(self) -> bool:
        """Every answered request credited its two hops once at its close, and each route
        dropped by a failover at most its two hops once more (for the steps their signed
        step receipts verified; the replacement's replay of them earns nothing); a hop
        is unpaid only where its node left before signing its receipt at the close."""
        paid = 2 * self.answered
        return paid - self.unpaid_closes <= self.credited_hops <= paid + 2 * self.failovers

    def lines(self, options: argparse.Namespace) -> list[str]:
        extra = _percentiles(self.extra_s)
        released = _percentiles(self.released_s)
        ended = _percentiles(self.ended_s)
        said = ", ".join(f"{name} {count}" for name, count in self.events.items())
        return [
            f"churn: {options.nodes} nodes in 2 ranges, links {options.link_ms:g} ms one way, "
            f"{options.clients} clients, {options.minutes:g} min, "
            f"{options.events_per_minute:g} events/min, {options.max_tokens} tokens an answer",
            f"events: {said}",
            f"requests: {self.answered} answered, {self.failed} failed, "
            f"{self.no_route} answered with the 503 of no route",
            f"greedy answers that differ from an undisturbed run: {self.differs}",
            f"extra time of a disturbed request: p50 {extra[0]:.2f} s, p95 {extra[1]:.2f} s "
            f"(n={len(self.extra_s)})",
            f"pause -> memory released (measured in the node): p50 {released[0]:.3f} s, "
            f"p95 {released[1]:.3f} s (n={len(self.released_s)}; of which sessions ended: "
            f"p50 {ended[0]:.3f} s, p95 {ended[1]:.3f} s)",
            f"credits and ledger consistent: {'yes' if self.consistent else 'no'} "
            f"({self.credited_hops} hops credited for {self.answered} answered requests "
            f"of 2 hops and {self.failovers} dropped routes; {self.unpaid_closes} closes "
            "lost a receipt to a leaving node)",
            *[f"  failed: {f}" for f in self.failures[:10]],
            f"failed requests: {self.failed} of {self.requests}, "
            f"memory released p95: {released[1]:.3f} s",
        ]


def _percentiles(values: list[float]) -> tuple[float, float]:
    if not values:
        return 0.0, 0.0
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


class Chats:
    """The users: each thread asks the prompts in turn, greedy, until told to stop."""

    def __init__(self, url: str, model: str, max_tokens: int) -> None:
        self._url, self._model, self._max_tokens = url, model, max_tokens
        self.outcomes: list[Outcome] = []
        self.stop = threading.Event()
        self.reference: dict[int, str] = {}

    def ask(self, http: httpx.Client, prompt: int) -> tuple[int, str, str, float]:
        """(status, text or error, finish reason, seconds)."""
        body = {
            "model": self._model,
            "messages": [{"role": "user", "content": PROMPTS[prompt]}],
            "max_tokens": self._max_tokens,
            "temperature": 0,
        }
        began = time.monotonic()
        reply = http.post("/v1/chat/completions", json=body)
        took = time.monotonic() - began
        if reply.status_code != 200:
            retry = reply.headers.get("Retry-After")
            return reply.status_code, f"{reply.text[:200]} (Retry-After {retry})", "", took
        choice = reply.json()["choices"][0]
        return 200, str(choice["message"]["content"]), str(choice["finish_reason"]), took

    def run(self, seed: int) -> None:
        prompt = seed % len(PROMPTS)
        with httpx.Client(base_url=self._url, timeout=180, trust_env=False) as http:
            while not self.stop.is_set():
                started = time.monotonic()
                try:
                    status, text, finish, _ = self.ask(http, prompt)
                except httpx.HTTPError as exc:
                    status, text, finish = 0, f"{type(exc).__name__}: {exc}", ""
                outcome = self._judge(prompt, started, status, text, finish)
                self.outcomes.append(outcome)
                prompt = (prompt + 1) % len(PROMPTS)
                if outcome.kind == "no-route":  # a polite client waits as it was told
                    self.stop.wait(RETRY_WAIT_S)

    def _judge(self, prompt: int, started: float, status: int, text: str, finish: str) -> Outcome:
        ended = time.monotonic()
        if status == 200 and finish in ("stop", "length"):
            kind = "answered" if text == self.reference[prompt] else "differs"
            return Outcome(prompt, started, ended, kind, text)
        if status == 503 and "Retry-After None" not in text:
            return Outcome(prompt, started, ended, "no-route", text)
        return Outcome(prompt, started, ended, "failed", f"{status} {finish} {text}")


class Driver:
    """Pauses, resumes, stops and kills random nodes; once, a whole range at once."""

    def __init__(self, network: ChurnNetwork, options: argparse.Namespace) -> None:
        self.net = network
        self.options = options
        self.rng = random.Random(options.seed)
        self.events: dict[str, int] = {"pause": 0, "resume": 0, "stop": 0, "kill -9": 0}
        self.event_times: list[float] = []
        self.no_replacement: list[tuple[float, float]] = []  # a range with no node
        self._down_since: dict[int, float] = {}  # stopped or killed: restart later
        self._hold_until: float | None = None

    def run(self, until: float) -> None:
        every = 60.0 / self.options.events_per_minute
        start = time.monotonic()
        hold_at = start + 0.4 * (until - start)
        held = False
        next_event = start + every / 2
        window: float | None = None
        while time.monotonic() < until:
            now = time.monotonic()
            self.net.refresh()
            if not held and now >= hold_at:
                self._hold(now)
                held = True
            elif self._hold_until is not None and now >= self._hold_until:
                self._release_hold(now)
            elif now >= next_event:
                self._random_event(now)
                next_event = now + every
            self._restart_due(now)
            gap = self._range_without_node(now)
            if gap and window is None:
                window = now
            elif not gap and window is not None:
                self.no_replacement.append((window, now))
                window = None
            time.sleep(0.2)
        if window is not None:
            self.no_replacement.append((window, time.monotonic()))

    def _range_without_node(self, now: float) -> bool:
        spans = {m.layers for m in self.net.members}
        return any(
            not any(m.available(now, GRACE_S) for m in self.net.members if m.layers == span)
            for span in spans
        )

    def _spare(self, member: Member, now: float) -> bool:
        """Another node of its range stays available: taking this one leaves a replacement."""
        return any(
            m is not member and m.layers == member.layers and m.available(now, GRACE_S)
            for m in self.net.members
        )

    def _random_event(self, now: float) -> None:
        serving = [m for m in self.net.members if m.available(now, GRACE_S) and self._spare(m, now)]
        paused = [m for m in self.net.members if m.state == "paused"]
        choices = []
        if serving:
            choices += ["pause", "pause", "stop", "kill -9"]
        if paused:
            choices += ["resume", "resume"]
        if not choices:
            return
        kind = self.rng.choice(choices)
        target = self.rng.choice(paused if kind == "resume" else serving)
        {"pause": self.net.pause, "resume": self.net.resume, "stop": self.net.stop}.get(
            kind, self.net.kill
        )(target)
        if kind in ("stop", "kill -9"):
            self._down_since[target.index] = now
        self.events[kind] += 1
        self.event_times.append(now)
        print(
            f"  {now - self._t0():6.1f} s  {kind:8} node {target.index} {target.layers}",
            flush=True,
        )

    def _restart_due(self, now: float) -> None:
        if self._hold_until is not None:
            return
        for index, since in list(self._down_since.items()):
            if now - since >= self.options.restart_s:
                member = self.net.members[index]
                if member.child is not None:
                    member.child.process.wait(30)
                self.net.start(member)
                del self._down_since[index]
                print(f"  {now - self._t0():6.1f} s  restart  node {index} {member.layers}")

    def _hold(self, now: float) -> None:
        span = self.net.members[0].layers
        ours = [m for m in self.net.members if m.layers == span]
        # every node of the range that runs (serving, or proving its layers again); the
        # others are paused or down already, and none restarts until the hold ends
        held = [m for m in ours if m.state in ("serving", "starting") and _alive(m)]
        for member in held:
            self.net.pause(member)
        self.events[f"range pause ({len(held)} of {len(ours)} nodes; the rest were down)"] = 1
        self.event_times.append(now)
        self._hold_until = now + self.options.hold_s
        self._held = held
        print(f"  {now - self._t0():6.1f} s  pause every node of layers {span}")

    def _release_hold(self, now: float) -> None:
        for member in self._held:
            member.read_events()
            if member.state == "paused":
                self.net.resume(member)
        self.event_times.append(now)
        self._hold_until = None
        print(f"  {now - self._t0():6.1f} s  resume the range")

    _started: float | None = None

    def _t0(self) -> float:
        if self._started is None:
            self._started = time.monotonic()
        return self._started


def _alive(member: Member) -> bool:
    return member.child is not None and member.child.process.poll() is None


def run(options: argparse.Namespace, model_dir: Path, workdir: Path) -> Report:
    half = options.nodes // 2
    spans = [(0, LAYERS // 2)] * (options.nodes - half) + [(LAYERS // 2, LAYERS)] * half
    network = ChurnNetwork(workdir, model_dir, spans, options.link_ms)
    try:
        model = network.wait_ready()
        chats = Chats(network.gateway_url, model, options.max_tokens)
        baseline: dict[int, float] = {}
        with httpx.Client(base_url=network.gateway_url, timeout=180, trust_env=False) as http:
            for prompt in range(len(PROMPTS)):
                status, text, _, _ = chats.ask(http, prompt)
                if status != 200:
                    raise RuntimeError(f"the undisturbed network refused a chat: {text}")
                chats.reference[prompt] = text
                _, again, _, took = chats.ask(http, prompt)
                if again != text:
                    raise RuntimeError("two undisturbed greedy answers differ")
                baseline[prompt] = took
        time.sleep(2.0)  # the warm-up's credit commits land
        hops_before = network.credited_hops()
        driver = Driver(network, options)
        driver._t0()
        threads = [
            threading.Thread(target=chats.run, args=(i,), daemon=True)
            for i in range(options.clients)
        ]
        for thread in threads:
            thread.start()
        driver.run(time.monotonic() + options.minutes * 60.0)
        chats.stop.set()
        for thread in threads:
            thread.join(200)
        time.sleep(3.0)  # the last sessions' credit commits land
        hops = network.credited_hops() - hops_before
        network.refresh()
        log = (workdir / "tracker.log").read_text(encoding="utf-8", errors="replace")
        unpaid = sum("closing route" in line for line in log.splitlines())
        failovers = sum(int(n) for n in re.findall(r"outcome=\S+ .*?failovers=(\d+)", log))
        return _report(chats, driver, network, baseline, hops, unpaid, failovers)
    finally:
        network.close()


def _overlaps(outcome: Outcome, windows: list[tuple[float, float]]) -> bool:
    return any(outcome.started <= end and begin <= outcome.ended for begin, end in windows)


def _report(
    chats: Chats,
    driver: Driver,
    network: ChurnNetwork,
    baseline: dict[int, float],
    hops: int,
    unpaid: int,
    failovers: int,
) -> Report:
    outcomes = chats.outcomes
    failures: list[str] = []
    no_route = failed = 0
    # a 503 is right only while some range had no routable node (a little margin: the
    # tracker learns of a returning node within a heartbeat or two)
    windows = [(a - 1.0, b + GRACE_S) for a, b in driver.no_replacement]
    for outcome in outcomes:
        if outcome.kind == "no-route" and _overlaps(outcome, windows):
            no_route += 1
        elif outcome.kind in ("no-route", "failed"):
            failed += 1
            failures.append(outcome.detail[:300])
    answered = [o for o in outcomes if o.kind in ("answered", "differs")]
    disturbed = [o for o in answered if any(o.started <= t <= o.ended for t in driver.event_times)]
    # The baseline is an undisturbed request of the same prompt under the same load
    # (the run's own, else the warm-up's, asked alone)
    calm: dict[int, list[float]] = {}
    for o in answered:
        if o not in disturbed:
            calm.setdefault(o.prompt, []).append(o.ended - o.started)
    baseline = {p: statistics.median(calm[p]) if p in calm else t for p, t in baseline.items()}
    return Report(
        requests=len(outcomes),
        answered=len(answered),
        failed=failed,
        no_route=no_route,
        differs=sum(o.kind == "differs" for o in outcomes),
        extra_s=[max(0.0, o.ended - o.started - baseline[o.prompt]) for o in disturbed],
        released_s=[s for m in network.members for s in m.released_s],
        ended_s=[s for m in network.members for s in m.ended_s],
        credited_hops=hops,
        unpaid_closes=unpaid,
        failovers=failovers,
        events=dict(driver.events),
        failures=failures,
    )


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=6, help="node processes (at least 5)")
    parser.add_argument("--link-ms", type=float, default=20.0, help="one-way delay of a link")
    parser.add_argument("--clients", type=int, default=4, help="chat clients at once")
    parser.add_argument("--minutes", type=float, default=5.0, help="how long the churn runs")
    parser.add_argument("--events-per-minute", type=float, default=6.0)
    parser.add_argument("--max-tokens", type=int, default=16, help="tokens an answer")
    parser.add_argument("--restart-s", type=float, default=10.0, help="a stopped node's absence")
    parser.add_argument("--hold-s", type=float, default=5.0, help="the whole range's pause")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--model", type=Path, help="model folder (default: the default model)")
    parser.add_argument("--workdir", type=Path, help="keep the logs here (default: a temp dir)")
    options = parser.parse_args(argv)
    if options.nodes < 5:
        parser.error("--nodes must be at least 5, so every range keeps a replacement")
    return options


def main() -> None:
    options = parse()
    model_dir = options.model or ensure_default_model()
    if options.workdir is not None:
        options.workdir.mkdir(parents=True, exist_ok=True)
        report = run(options, model_dir, options.workdir)
    else:
        with tempfile.TemporaryDirectory(prefix="meshnet-churn-") as folder:
            report = run(options, model_dir, Path(folder))
    for line in report.lines(options):
        print(line)


if __name__ == "__main__":
    main()
