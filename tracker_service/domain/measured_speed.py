"""Speed measured, not claimed: the throughput route formation weighs for each node.

A node's registration and heartbeats *claim* its tokens/s; nothing checks a claim,
so a node claiming 1e12 would draw every route (docs/architecture.md#measured-speed).
The tracker times the decode steps of its own route sessions, per hop (services/speed_meter.py), and
keeps for each node an exponentially weighted mean of what one layer costs it per
token (``ms_per_layer``) with the number of steps behind it. Per layer, so a node
that moves to another shard keeps a meaningful figure.

What a candidate is costed at (tokens/s through its whole shard):

- measured (at least ``min_steps`` decode steps): its measurement;
- not yet measured: the median of the fingerprint's measured nodes, per layer (a
  newcomer is neither favoured nor starved); with no node measured yet, the median
  of the claims, which one liar cannot move;
- either way never more than it claims: a claim can only lower the estimate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import median
from typing import NamedTuple, Protocol

# The fastest per-layer step the tracker will believe (1 µs); a zero or negative
# time is a clock artefact, never a measurement.
MIN_MS_PER_LAYER = 0.001


class MeasuredSpeed(NamedTuple):
    """A node's measured cost: mean ms one layer takes for one token, and its sample size."""

    ms_per_layer: float
    steps: int

    def tokens_per_s(self, layers: int) -> float:
        """Tokens/s through `layers` layers at this cost."""
        return 1000.0 / (self.ms_per_layer * max(1, layers))


@dataclass(frozen=True)
class SpeedPolicy:
    alpha: float = 0.1  # weight of one decode step in the moving mean
    min_steps: int = 4  # decode steps before a node counts as measured


class Shard(Protocol):
    """What the estimate reads of a candidate (route_formation.Candidate)."""

    @property
    def node_id(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def throughput(self) -> float: ...


def step_sample(seconds: float, layers: int, tokens: int = 1) -> float:
    """The per-layer cost (ms) one timed step shows: `tokens` positions through `layers`."""
    work = max(1, layers) * max(1, tokens)
    return max(MIN_MS_PER_LAYER, seconds * 1000.0 / work)


def blend(
    old: MeasuredSpeed | None, ms_per_layer: float, steps: int, *, alpha: float
) -> MeasuredSpeed:
    """`old` moved towards a batch of `steps` steps that averaged `ms_per_layer`, as if
    each step had been blended in one by one with weight `alpha`."""
    sample = max(MIN_MS_PER_LAYER, ms_per_layer)
    if steps <= 0:
        return old if old is not None else MeasuredSpeed(sample, 0)
    if old is None or old.steps <= 0:
        return MeasuredSpeed(sample, steps)
    weight = 1.0 - (1.0 - alpha) ** steps
    return MeasuredSpeed(old.ms_per_layer + weight * (sample - old.ms_per_layer), old.steps + steps)


def claimed_ms_per_layer(claim: float, layers: int) -> float:
    """The per-layer cost a claim of `claim` tokens/s through `layers` layers states."""
    if not claim > 0:
        return math.inf
    return max(MIN_MS_PER_LAYER, 1000.0 / (claim * max(1, layers)))


def reference_ms_per_layer(
    candidates: Sequence[Shard], measured: Mapping[str, MeasuredSpeed], *, min_steps: int
) -> float | None:
    """The per-layer cost a node not yet measured is costed at: the median of the
    measured nodes among `candidates`, else the median of their claims (None: neither)."""
    known = [
        speed.ms_per_layer
        for c in candidates
        if (speed := measured.get(c.node_id)) is not None and speed.steps >= min_steps
    ]
    if known:
        return float(median(known))
    claims = [
        claimed_ms_per_layer(c.throughput, c.end - c.start) for c in candidates if c.throughput > 0
    ]
    return float(median(claims)) if claims else None


def estimated_throughputs(
    candidates: Sequence[Shard],
    measured: Mapping[str, MeasuredSpeed],
    *,
    min_steps: int,
    unknown: float,
) -> list[float]:
    """Tokens/s through each candidate's whole shard, in `candidates` order, as route
    formation costs them (the module's rules; `unknown` when nothing at all is known)."""
    reference = reference_ms_per_layer(candidates, measured, min_steps=min_steps)
    out: list[float] = []
    for c in candidates:
        layers = max(1, c.end - c.start)
        speed = measured.get(c.node_id)
        if speed is not None and speed.steps >= min_steps:
            ms = speed.ms_per_layer
        elif reference is not None:
            ms = reference
        else:
            out.append(min(unknown, c.throughput) if c.throughput > 0 else unknown)
            continue
        observed = 1000.0 / (ms * layers)
        out.append(min(observed, c.throughput) if c.throughput > 0 else observed)
    return out
