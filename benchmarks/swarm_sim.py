"""Swarm simulator: MeshNet's allocation vs Petals' rule vs random, on the same churn.

Drives the tracker's own code in-process (no network, no model):
``tracker_service.allocation`` places every joining node and plans the
rebalancing moves, ``tracker_service.routing.form_route`` forms the routes.

The world: a model of 80 layers (a 70B Llama in 16-bit: ~1.7 GB a layer) and
N contributors drawn from gaming-PC classes (8, 12, 16 and 24 GB GPUs and
CPU-only machines: room for 3 to 12 layers, 15 to 1,000 layer-tokens/s) in
five regions with a latency matrix. Node lifetimes are heavy-tailed (Pareto,
alpha 1.5, at least 10 minutes: most leave soon, a few stay for hours);
arrivals keep the population near N. Every policy sees exactly the same
arrivals, departures and requests.

Policies:
  meshnet  choose_range (holes first, then the highest bottleneck, length too)
           and plan_moves every minute (only idle nodes, 20 % margin, one
           move per node per dwell period)
  petals   Petals' rule: the window of max length whose sorted throughputs
           are smallest (``_choose_best_start``), and its rebalancing check
           (move when the bottleneck rises above initial / 0.75) on a random
           sample of servers every minute, sessions or not
  random   a random window of max length, never moved

A move takes the node out for a reload (60 s) in both policies. Measured per
policy: the time-weighted mean bottleneck (slowest layer's tokens/s), the
fraction of time every layer is covered, route length and latency p50/p99 of
a stream of requests, and the share of requests that found a route. Run at
1,000 and 10,000 nodes; the last line is the ratio of MeshNet's mean
bottleneck to Petals' at 1,000 nodes.

    python benchmarks/swarm_sim.py [--nodes 1000 10000] [--hours 1] [--seed 1]
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tracker_service.allocation import Slot, choose_range, plan_moves
from tracker_service.routing import Candidate, NoRoute, RoutingPolicy, form_route

LAYERS = 80
# (share of contributors, room in layers, layer-tokens/s): 8, 12, 16, 24 GB GPUs, CPU-only.
CLASSES = [(0.30, 3, 400.0), (0.25, 5, 500.0), (0.15, 8, 700.0), (0.10, 12, 1000.0)]
CLASSES.append((0.20, 6, 15.0))
REGIONS = ["us-east", "us-west", "europe", "asia", "south-america"]
REGION_SHARE = [0.25, 0.15, 0.30, 0.20, 0.10]
# One-way latency between regions, ms.
LATENCY = [
    [8, 35, 45, 110, 70],
    [35, 8, 75, 60, 95],
    [45, 75, 8, 120, 105],
    [110, 60, 120, 10, 160],
    [70, 95, 105, 160, 12],
]
MIN_LIFETIME_S = 600.0
PARETO_ALPHA = 1.5
MOVE_S = 60.0  # reload + doctor + gate of a moving node
REBALANCE_S = 60.0
REQUEST_S = 60.0  # one request a minute per policy: 10,000-node route formation is the cost
DWELL_S = 600.0
BUSY_SHARE = 0.3  # share of nodes holding an open session when moves are planned
PETALS_BALANCE_QUALITY = 0.75
PETALS_CHECKS = 64  # servers checking per minute (Petals: each every ~2 minutes)
MESHNET_MOVES = 8  # moves the tracker offers per minute


@dataclass(frozen=True)
class Spec:
    node_id: str
    room: int
    speed: float
    region: int


@dataclass
class Live:
    spec: Spec
    start: int
    end: int
    since: float
    rate: float = 0.0  # tokens/s through the shard: speed / length

    def __post_init__(self) -> None:
        self.rate = self.spec.speed / (self.end - self.start)


Choose = Callable[["World", Spec], tuple[int, int]]


@dataclass
class World:
    """One policy's swarm: its nodes and the layer rates they add up to."""

    name: str
    choose: Choose
    rng: random.Random
    rates: list[float] = field(default_factory=lambda: [0.0] * LAYERS)
    nodes: dict[str, Live] = field(default_factory=dict)
    moving: set[str] = field(default_factory=set)
    area: float = 0.0  # integral of the bottleneck over time
    ideal_area: float = 0.0  # integral of the mean layer rate: no placement can beat it
    covered_s: float = 0.0
    last_t: float = 0.0
    moves: int = 0
    routes: list[tuple[int, float]] = field(default_factory=list)
    failed: int = 0

    def advance(self, t: float) -> None:
        low = min(self.rates)
        self.area += low * (t - self.last_t)
        self.ideal_area += sum(self.rates) / LAYERS * (t - self.last_t)
        self.covered_s += (t - self.last_t) if low > 0 else 0.0
        self.last_t = t

    def _shift(self, live: Live, sign: float) -> None:
        rate = sign * live.rate
        rates = self.rates
        for i in range(live.start, live.end):
            value = rates[i] + rate
            rates[i] = value if value > 1e-9 else 0.0

    def join(self, spec: Spec, t: float, at: tuple[int, int] | None = None) -> None:
        start, end = at or self.choose(self, spec)
        live = Live(spec, start, end, t)
        self.nodes[spec.node_id] = live
        self._shift(live, +1.0)

    def leave(self, node_id: str) -> Live | None:
        self.moving.discard(node_id)
        live = self.nodes.pop(node_id, None)
        if live is not None:
            self._shift(live, -1.0)
        return live


# -- policies ----------------------------------------------------------------------------


def meshnet_choose(world: World, spec: Spec) -> tuple[int, int]:
    choice = choose_range(LAYERS, world.rates, max_layers=spec.room, speed=spec.speed)
    assert choice.start is not None and choice.end is not None
    return choice.start, choice.end


def petals_best_start(rates: list[float], length: int) -> int:
    """Petals' ``_choose_best_start``: the window whose sorted throughputs are smallest."""
    return min((sorted(rates[i : i + length]), i) for i in range(LAYERS - length + 1))[1]


def petals_choose(world: World, spec: Spec) -> tuple[int, int]:
    start = petals_best_start(world.rates, spec.room)
    return start, start + spec.room


def random_choose(world: World, spec: Spec) -> tuple[int, int]:
    start = world.rng.randrange(LAYERS - spec.room + 1)
    return start, start + spec.room


def meshnet_moves(world: World, t: float) -> list[tuple[str, int, int]]:
    slots = [
        Slot(
            node_id,
            live.start,
            live.end,
            live.rate,
            # Busy nodes, and nodes within their dwell time, are not moved (node side).
            open_sessions=int(world.rng.random() < BUSY_SHARE or t - live.since < DWELL_S),
        )
        for node_id, live in world.nodes.items()
    ]
    moves = plan_moves(LAYERS, slots, max_moves=MESHNET_MOVES, candidates=16)
    return [(m.node_id, m.start, m.end) for m in moves]


def petals_moves(world: World, t: float) -> list[tuple[str, int, int]]:
    """Petals' ``should_choose_other_blocks`` for a random sample of servers.

    Each sampled server removes itself, re-picks with Petals' rule, and moves
    when the bottleneck would rise past initial / balance_quality; the checks
    run one after another, each seeing the moves decided before it.
    """
    moves: list[tuple[str, int, int]] = []
    rates = list(world.rates)
    ids = list(world.nodes)
    for node_id in world.rng.sample(ids, min(PETALS_CHECKS, len(ids))):
        live = world.nodes[node_id]
        length = live.end - live.start
        initial = min(rates)
        trial = list(rates)
        for i in range(live.start, live.end):
            trial[i] = max(0.0, trial[i] - live.rate)
        start = petals_best_start(trial, length)
        if start == live.start:
            continue
        for i in range(start, start + length):
            trial[i] += live.rate
        after = min(trial)
        if after <= 0 or initial / after >= PETALS_BALANCE_QUALITY:
            continue
        moves.append((node_id, start, start + length))
        rates = trial
    return moves


# -- the run -----------------------------------------------------------------------------


def lifetime(rng: random.Random) -> float:
    return MIN_LIFETIME_S / (1.0 - rng.random()) ** (1.0 / PARETO_ALPHA)


def residual_lifetime(rng: random.Random) -> float:
    """Remaining life of a node already running at the start (the stationary residual)."""
    u = 1.0 - rng.random()  # survival probability, in (0, 1]
    alpha, xm = PARETO_ALPHA, MIN_LIFETIME_S
    if u > 1.0 / alpha:
        return (1.0 - u) * alpha * xm / (alpha - 1.0)
    return float(xm * (alpha * u) ** (-1.0 / (alpha - 1.0)))


def draw_spec(rng: random.Random, index: int) -> Spec:
    _share, room, speed = rng.choices(CLASSES, weights=[c[0] for c in CLASSES])[0]
    room = max(1, room + rng.choice((-1, 0, 0, 1)))  # free memory varies from PC to PC
    speed *= rng.uniform(0.7, 1.3)
    region = rng.choices(range(len(REGIONS)), weights=REGION_SHARE)[0]
    return Spec(f"n{index}", room, speed, region)


def events(nodes: int, horizon_s: float, seed: int) -> list[tuple[float, int, str, object]]:
    """The shared script: (time, order, kind, payload), sorted."""
    rng = random.Random(seed)
    script: list[tuple[float, int, str, object]] = []
    counter = itertools.count()
    mean_life = MIN_LIFETIME_S * PARETO_ALPHA / (PARETO_ALPHA - 1)
    index = 0
    for _ in range(nodes):  # the swarm as it stands at the start
        spec = draw_spec(rng, index)
        index += 1
        script.append((0.0, next(counter), "join", spec))
        script.append((residual_lifetime(rng), next(counter), "leave", spec.node_id))
    t = 0.0
    while True:
        t += rng.expovariate(nodes / mean_life)
        if t >= horizon_s:
            break
        spec = draw_spec(rng, index)
        index += 1
        script.append((t, next(counter), "join", spec))
        script.append((t + lifetime(rng), next(counter), "leave", spec.node_id))
    for tick in range(1, int(horizon_s / REBALANCE_S)):
        script.append((tick * REBALANCE_S, next(counter), "rebalance", None))
    for tick in range(1, int(horizon_s / REQUEST_S)):
        script.append((tick * REQUEST_S, next(counter), "request", rng.randrange(len(REGIONS))))
    script.sort(key=lambda e: (e[0], e[1]))
    return [e for e in script if e[0] < horizon_s]


def request(world: World, region: int, rng: random.Random) -> None:
    """Form a route with the tracker's code; its latency per token over the regions."""
    nodes = world.nodes  # moving nodes are out of it until they are back
    candidates = [
        Candidate(node_id, "", b"", n.start, n.end, n.rate) for node_id, n in nodes.items()
    ]
    regions = {node_id: n.spec.region for node_id, n in nodes.items()}
    try:
        route = form_route(
            candidates,
            LAYERS,
            latency_ms=lambda node_id: float(LATENCY[region][regions[node_id]]),
            policy=RoutingPolicy(),
            rng=rng,
        )
    except NoRoute:
        world.failed += 1
        return
    ms, where = 0.0, region
    for hop in route.hops:
        c = hop.candidate
        ms += LATENCY[where][regions[c.node_id]]
        ms += 1000.0 / c.throughput * (c.end - hop.effective_start) / (c.end - c.start)
        where = regions[c.node_id]
    ms += LATENCY[where][region]
    world.routes.append((len(route.hops), ms))


def simulate(nodes: int, horizon_s: float, seed: int) -> tuple[dict[str, World], float]:
    script = events(nodes, horizon_s, seed)
    worlds = {
        "meshnet": World("meshnet", meshnet_choose, random.Random(seed + 1)),
        "petals": World("petals", petals_choose, random.Random(seed + 2)),
        "random": World("random", random_choose, random.Random(seed + 3)),
    }
    planners = {"meshnet": meshnet_moves, "petals": petals_moves}
    began = time.perf_counter()
    for world in worlds.values():
        returns: list[tuple[float, str, Spec, int, int]] = []  # moving nodes coming back
        route_rng = random.Random(seed + 7)
        for t, _, kind, payload in script:
            while returns and returns[0][0] <= t:
                back, node_id, spec, start, end = heapq.heappop(returns)
                world.advance(back)
                if node_id in world.moving:
                    world.moving.discard(node_id)
                    world.join(spec, back, (start, end))
            world.advance(t)
            if kind == "join":
                assert isinstance(payload, Spec)
                world.join(payload, t)
            elif kind == "leave":
                assert isinstance(payload, str)
                world.leave(payload)
            elif kind == "rebalance" and world.name in planners:
                for node_id, start, end in planners[world.name](world, t):
                    spec = world.nodes[node_id].spec
                    world.leave(node_id)
                    world.moving.add(node_id)
                    world.moves += 1
                    heapq.heappush(returns, (t + MOVE_S, node_id, spec, start, end))
            elif kind == "request":
                assert isinstance(payload, int)
                request(world, payload, route_rng)
        world.advance(horizon_s)
    return worlds, time.perf_counter() - began


def percentile(values: list[float], q: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(nodes: int, horizon_s: float, worlds: dict[str, World], wall_s: float) -> None:
    print(f"== {nodes:,} nodes, {horizon_s / 3600:.1f} h of churn, {wall_s:.1f} s wall ==")
    ceiling = worlds["meshnet"].ideal_area / horizon_s
    print(f"ceiling (mean layer rate, meshnet's swarm): {ceiling:.1f} tokens/s")
    for world in worlds.values():
        lengths = [hops for hops, _ in world.routes]
        latency = [ms for _, ms in world.routes]
        asked = len(world.routes) + world.failed
        print(
            f"{world.name:8s} mean bottleneck {world.area / horizon_s:8.1f} tokens/s | "
            f"full coverage {100 * world.covered_s / horizon_s:6.2f} % | "
            f"route hops p50 {percentile(lengths, 0.5):4.0f} | "
            f"latency p50 {percentile(latency, 0.5):6.0f} ms "
            f"p99 {percentile(latency, 0.99):6.0f} ms | "
            f"routed {100 * len(world.routes) / max(asked, 1):6.2f} % | moves {world.moves}"
        )


def ratio(worlds: dict[str, World]) -> float:
    petals = worlds["petals"].area
    return worlds["meshnet"].area / petals if petals > 0 else math.inf


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[10_000, 1_000])
    parser.add_argument("--hours", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    horizon = args.hours * 3600.0
    results: dict[int, dict[str, World]] = {}
    for nodes in args.nodes:
        worlds, wall = simulate(nodes, horizon, args.seed)
        report(nodes, horizon, worlds, wall)
        results[nodes] = worlds
    for nodes, worlds in results.items():
        covered = 100 * worlds["meshnet"].covered_s / horizon
        print(
            f"meshnet / petals mean bottleneck at {nodes:,} nodes: {ratio(worlds):.2f} "
            f"(meshnet full coverage {covered:.2f} %)"
        )
    last = results[args.nodes[-1]]
    print(f"ratio: {ratio(last):.2f}")


if __name__ == "__main__":
    main()
