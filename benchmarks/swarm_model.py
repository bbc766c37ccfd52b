"""The swarm simulator's world: contributors, their physics, and the shared churn script.

Everything here is policy-free: both worlds (MeshNet's tracker, Petals' rule)
see the same contributors arriving and leaving at the same times. The numbers
and the reasons for them are listed in ``benchmarks/swarm_sim.py``'s docstring.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

LAYERS = 80  # a 70B Llama: ~1.75 GB a layer in 16-bit
# (share, room in layers, per-block compute in layer-tokens/s): 8, 12, 16, 24 GB GPUs, CPU-only.
CLASSES = [
    (0.30, 3, 400.0),
    (0.25, 5, 500.0),
    (0.15, 8, 700.0),
    (0.10, 12, 1000.0),
    (0.20, 6, 15.0),
]
# Home uplinks (Mbit/s) and their shares. A token crossing a node sends its hidden state
# on: 8,192 x 16 bit = 131 kbit, so 1 Mbit/s carries 7.6 tokens/s.
UPLINKS_MBIT = [(0.25, 10.0), (0.30, 20.0), (0.25, 50.0), (0.20, 200.0)]
TOKENS_PER_MBIT = 1e6 / (8192 * 16)
REGIONS = ["us-east", "us-west", "europe", "asia", "south-america"]
REGION_SHARE = [0.25, 0.15, 0.30, 0.20, 0.10]
LATENCY = [  # one-way latency between regions, ms
    [8, 35, 45, 110, 70],
    [35, 8, 75, 60, 95],
    [45, 75, 8, 120, 105],
    [110, 60, 120, 10, 160],
    [70, 95, 105, 160, 12],
]
MIN_LIFETIME_S = 600.0
PARETO_ALPHA = 1.5
GRACEFUL_SHARE = 0.5  # departures announced (app quit); the rest vanish (sleep, crash, power)
LOAD_BASE_S = 15.0  # process start, allocator, first forward
BLOCK_LOAD_S = 10.0  # a 1.75 GB block: from the disk cache or downloaded at home speeds
REQUEST_S = 60.0
BUSY_SHARE = 0.3  # chance that a node holds an open session at a given moment


@dataclass(frozen=True)
class Spec:
    node_id: str
    room: int  # layers its memory holds
    speed: float  # per-block compute, layer-tokens/s (what a local measurement finds)
    uplink: float  # tokens/s its uplink carries
    region: int
    graceful: bool  # announces its departure


def true_rate(spec: Spec, length: int) -> float:
    """Tokens/s a node really serves on each of its blocks when it serves `length` of them.

    Every token through the node costs `length` block computations, and every
    token leaves through the node's uplink once, whatever the length.
    """
    return min(spec.speed / length, spec.uplink)


def load_s(length: int) -> float:
    return LOAD_BASE_S + BLOCK_LOAD_S * length


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
    mbit = rng.choices([u[1] for u in UPLINKS_MBIT], weights=[u[0] for u in UPLINKS_MBIT])[0]
    uplink = mbit * rng.uniform(0.7, 1.3) * TOKENS_PER_MBIT
    region = rng.choices(range(len(REGIONS)), weights=REGION_SHARE)[0]
    graceful = rng.random() < GRACEFUL_SHARE
    return Spec(f"n{index}", room, speed, uplink, region, graceful)


Event = tuple[float, int, str, object]


def events(nodes: int, horizon_s: float, seed: int) -> list[Event]:
    """The shared script: (time, order, kind, payload), sorted.

    Kinds: ``start`` (a node already serving at t=0), ``join``, ``leave`` and
    ``request`` (payload: the client's region).
    """
    rng = random.Random(seed)
    script: list[Event] = []
    counter = itertools.count()
    mean_life = MIN_LIFETIME_S * PARETO_ALPHA / (PARETO_ALPHA - 1)
    index = 0
    for _ in range(nodes):  # the swarm as it stands at the start
        spec = draw_spec(rng, index)
        index += 1
        script.append((0.0, next(counter), "start", spec))
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
    for tick in range(1, int(horizon_s / REQUEST_S)):
        script.append((tick * REQUEST_S, next(counter), "request", rng.randrange(len(REGIONS))))
    script.sort(key=lambda e: (e[0], e[1]))
    return [e for e in script if e[0] < horizon_s]
