"""Swarm simulator: MeshNet's allocation vs Petals' rule vs random, on the same churn.

Drives the product's code in-process (no network, no model): MeshNet's world
places nodes with ``tracker_service.domain.allocation.choose_range`` and
``rebalancing.PendingPlacements``, moves them with ``RebalanceBoard`` and
``core.doctor.placement_advice.should_move``; every world's requests are routed by
``tracker_service.domain.route_formation.form_route``. Petals' world runs a transcription of
``petals/server/block_selection.py`` on what a Petals server knows.

Model and assumptions (every number is in benchmarks/swarm_model.py):

- 80 layers (a 70B Llama, 16-bit); contributors drawn from gaming-PC classes:
  8, 12, 16 and 24 GB GPUs and CPU-only machines, room for 3 to 12 layers
  (+-1), 15 to 1,000 layer-tokens/s of per-block compute (+-30 %); home
  uplinks of 10, 20, 50 or 200 Mbit/s (+-30 %), 131 kbit a token; five regions
  with a latency matrix.
- Physics: a token through a node serving k blocks costs k block computations
  and crosses its uplink once, so the node really serves
  ``min(speed / k, uplink)`` tokens/s on each of its blocks (routes cross
  whole spans). The swarm's real bottleneck is the slowest layer's sum of
  those rates; a layer nobody serves is a hole (bottleneck 0). The mean layer
  rate is the ceiling no placement of those spans beats.
- Churn: heavy-tailed lifetimes (Pareto, alpha 1.5, at least 10 minutes),
  arrivals keeping the population near N; half of the departures are clean,
  half vanish (sleep, crash). The swarm at t=0 is already placed and serving.
- Loading: 15 s + 10 s a block, during which a node serves nothing, on
  joining and on every move, in every world; MeshNet adds 20 s of doctor and
  gate. A Petals move drops the server's open sessions; a MeshNet node moves
  only without open sessions (30 % of nodes hold one at any moment) and not
  within 10 minutes of its last start.
- Knowledge. Petals: announced ``min(forward_rps / ((k + 1) / 2), network_rps)``
  per server (its ``throughput.py``), counted from the start of loading,
  vanished servers counted until their DHT record expires (120-240 s);
  blocks = all memory holds; a check every U(0, 240) s per server with
  balance_quality 0.75 (see swarm_petals.py for the one approximation).
  MeshNet: measured compute tokens/s through the shard (not the uplink),
  memory, open sessions; vanished nodes counted until 3 missed heartbeats
  (20-30 s); rebalancing every 30 s, one move at a time, 20 % margin.
- Requests: one a minute per world, from a random region, routed over the
  nodes serving at that moment by ``form_route`` (its measured throughputs);
  latency = network one-way hops + each hop's real per-token service time.

Measured per policy: the time-weighted mean bottleneck and its course per
10 minutes, the fraction of time every layer is covered, route length and
latency p50/p99, the share of requests that found a route, moves and the moves
that dropped open sessions. The last line is the ratio of MeshNet's mean
bottleneck to Petals' at the last swarm size given (1,000 nodes by default).

    python benchmarks/swarm_sim.py [--nodes 10000 1000] [--hours 1] [--seed 1]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.swarm_meshnet import MeshnetWorld
from benchmarks.swarm_model import LATENCY, LAYERS, Spec, events
from benchmarks.swarm_petals import PetalsWorld
from benchmarks.swarm_worlds import RandomWorld, World
from tracker_service.domain.route_formation import NoRoute, RoutingPolicy, form_route


def request(world: World, region: int, rng: random.Random) -> None:
    """Form a route with the tracker's code; its latency per token over the regions."""
    serving = world.serving
    candidates = [s.candidate for s in serving.values()]
    specs = world.specs
    try:
        route = form_route(
            candidates,
            LAYERS,
            latency_ms=lambda node_id: float(LATENCY[region][specs[node_id].region]),
            policy=RoutingPolicy(),
            rng=rng,
            measured=world.speeds,
        )
    except NoRoute:
        world.failed += 1
        return
    ms, where = 0.0, region
    for hop in route.hops:
        c = hop.candidate
        live, there = serving[c.node_id], specs[c.node_id].region
        ms += LATENCY[where][there]
        ms += 1000.0 / live.rate * (c.end - hop.effective_start) / (c.end - c.start)
        where = there
    ms += LATENCY[where][region]
    world.routes.append((len(route.hops), ms))


def simulate(
    nodes: int, horizon_s: float, seed: int, *, what_if_uplink: bool = False
) -> tuple[dict[str, World], tuple[float, float]]:
    script = events(nodes, horizon_s, seed)
    worlds: dict[str, World] = {
        "meshnet": MeshnetWorld(random.Random(seed + 1)),
        "petals": PetalsWorld(random.Random(seed + 2)),
        "random": RandomWorld(random.Random(seed + 3), name="random"),
    }
    if what_if_uplink:
        worlds["mn+uplink"] = MeshnetWorld(random.Random(seed + 1), "mn+uplink", knows_uplink=True)
    began, began_cpu = time.perf_counter(), time.process_time()
    for world in worlds.values():
        route_rng = random.Random(seed + 7)
        for t, _, kind, payload in script:
            world.run_timers(t)
            world.advance(t)
            if kind in ("start", "join"):
                assert isinstance(payload, Spec)
                world.arrive(payload, t, already_serving=kind == "start")
            elif kind == "leave":
                assert isinstance(payload, str)
                world.leave(payload, t)
            elif kind == "request":
                assert isinstance(payload, int)
                request(world, payload, route_rng)
        world.run_timers(horizon_s)
        world.advance(horizon_s)
    return worlds, (time.perf_counter() - began, time.process_time() - began_cpu)


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(
    nodes: int, horizon_s: float, worlds: dict[str, World], took: tuple[float, float]
) -> None:
    wall_s, cpu_s = took
    print(
        f"== {nodes:,} nodes, {horizon_s / 3600:.1f} h of churn: "
        f"{wall_s:.1f} s wall, {cpu_s:.1f} s CPU =="
    )
    for world in worlds.values():
        lengths = [hops for hops, _ in world.routes]
        latency = [ms for _, ms in world.routes]
        asked = len(world.routes) + world.failed
        print(
            f"{world.name:8s} mean bottleneck {world.area / horizon_s:7.1f} tokens/s "
            f"(ceiling {world.ideal_area / horizon_s:7.1f}) | "
            f"full coverage {100 * world.covered_s / horizon_s:6.2f} % | "
            f"route hops p50 {percentile(lengths, 0.5):3.0f} | "
            f"latency p50 {percentile(latency, 0.5):5.0f} ms "
            f"p99 {percentile(latency, 0.99):5.0f} ms | "
            f"routed {100 * len(world.routes) / max(asked, 1):6.2f} % | "
            f"moves {world.moves} ({world.interrupted} dropping sessions)"
        )
    for world in worlds.values():
        course = " ".join(f"{area / 600:.0f}" for area in world.buckets)
        print(f"{world.name:8s} bottleneck per 10 min: {course}")


def ratio(worlds: dict[str, World]) -> float:
    petals = worlds["petals"].area
    return worlds["meshnet"].area / petals if petals > 0 else math.inf


def bound(worlds: dict[str, World]) -> float:
    """The most any policy's mean bottleneck can be over Petals'.

    The random world serves every node at full memory and never moves, so its
    mean layer rate is the ceiling of any placement of the same arrivals
    (a node's real capacity, ``min(speed, k x uplink)``, never grows as ``k``
    shrinks); no bottleneck exceeds its swarm's mean layer rate.
    """
    petals = worlds["petals"].area
    return worlds["random"].ideal_area / petals if petals > 0 else math.inf


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[10_000, 1_000])
    parser.add_argument("--hours", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--what-if-uplink",
        action="store_true",
        help="add a MeshNet world whose nodes report their uplink (they do not today)",
    )
    args = parser.parse_args()
    horizon = args.hours * 3600.0
    results: dict[int, dict[str, World]] = {}
    for nodes in args.nodes:
        worlds, took = simulate(nodes, horizon, args.seed, what_if_uplink=args.what_if_uplink)
        report(nodes, horizon, worlds, took)
        results[nodes] = worlds
    for nodes, worlds in results.items():
        covered = 100 * worlds["meshnet"].covered_s / horizon
        print(
            f"meshnet / petals mean bottleneck at {nodes:,} nodes: {ratio(worlds):.2f} "
            f"(meshnet full coverage {covered:.2f} %; no policy can exceed "
            f"{bound(worlds):.2f})"
        )
    print(f"ratio: {ratio(results[args.nodes[-1]]):.2f}")


if __name__ == "__main__":
    main()
