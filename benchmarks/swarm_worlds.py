"""One swarm per policy: what each policy knows, how it decides, and what really serves.

A :class:`World` keeps the *truth* (which nodes serve which layers at which
real rate; the bottleneck is measured on it) apart from the policy's own
*bookkeeping*, which is all the policy decides on:

- :class:`PetalsWorld`: Petals' DHT view. Every server announces one
  throughput, ``min(forward_rps / ((num_blocks + 1) / 2), network_rps)``
  (``petals/server/throughput.py``), added to each block of its span from the
  moment it starts loading (``JOINING``); a server that vanishes stays in the
  view until its record expires. Blocks: ``choose_best_blocks`` with
  ``num_blocks`` = all its memory holds; every server re-checks
  ``should_choose_other_blocks`` every ``U(0, 240)`` s and reloads elsewhere
  when told to, open sessions or not.
- :class:`MeshnetWorld`: the tracker's registry (measured tokens/s through the
  shard, memory, open sessions), its pending placements, and
  :class:`~tracker_service.services.rebalancing.RebalanceBoard` every
  ``rebalance_poll_s``; the node's side of a move is ``core.doctor.placement_advice.should_move``.
- :class:`RandomWorld`: a random window of all its memory, never moved.
"""

from __future__ import annotations

import heapq
import itertools
import random
from dataclasses import dataclass, field

from benchmarks.swarm_model import BUSY_SHARE, LAYERS, Spec, load_s, true_rate
from tracker_service.domain.measured_speed import MeasuredSpeed
from tracker_service.domain.route_formation import Candidate

EMPTY = 1e-6  # a layer rate at or below this is a hole (float residue of adds and removals)


@dataclass
class Serving:
    start: int
    end: int
    rate: float  # real tokens/s on each of its blocks
    measured: float  # tokens/s through its shard as the node measures it (compute only)
    candidate: Candidate  # as route formation sees it (built once: 10,000 a request add up)


@dataclass
class World:
    """The truth of one policy's swarm, its timers, and what was measured on it."""

    rng: random.Random
    name: str = "world"
    true: list[float] = field(default_factory=lambda: [0.0] * LAYERS)
    serving: dict[str, Serving] = field(default_factory=dict)
    # What the tracker's sessions time of each serving node: its real speed.
    speeds: dict[str, MeasuredSpeed] = field(default_factory=dict)
    specs: dict[str, Spec] = field(default_factory=dict)  # nodes alive now
    timers: list[tuple[float, int, str, str, int | None, object]] = field(default_factory=list)
    gen: dict[str, int] = field(default_factory=dict)  # a node's timers die when it changes
    area: float = 0.0  # integral of the real bottleneck over time
    ideal_area: float = 0.0  # integral of the mean real layer rate
    covered_s: float = 0.0
    last_t: float = 0.0
    buckets: list[float] = field(default_factory=list)  # bottleneck area per 10 minutes
    moves: int = 0
    interrupted: int = 0  # moves that dropped open sessions
    routes: list[tuple[int, float]] = field(default_factory=list)
    failed: int = 0
    _seq: itertools.count[int] = field(default_factory=itertools.count)

    # -- time ----------------------------------------------------------------------------

    def advance(self, t: float) -> None:
        dt = t - self.last_t
        if dt <= 0:
            return
        low = min(self.true)
        low = low if low > EMPTY else 0.0
        self.area += low * dt
        self.ideal_area += sum(self.true) / LAYERS * dt
        self.covered_s += dt if low > 0 else 0.0
        bucket = int(self.last_t // 600)  # events are dense: no interval spans two buckets much
        while len(self.buckets) <= bucket:
            self.buckets.append(0.0)
        self.buckets[bucket] += low * dt
        self.last_t = t

    def schedule(
        self, t: float, kind: str, node_id: str, payload: object = None, always: bool = False
    ) -> None:
        gen = None if always else self.gen.get(node_id, 0)
        heapq.heappush(self.timers, (t, next(self._seq), kind, node_id, gen, payload))

    def run_timers(self, until: float) -> None:
        while self.timers and self.timers[0][0] <= until:
            t, _, kind, node_id, gen, payload = heapq.heappop(self.timers)
            self.advance(t)
            if gen is None or self.gen.get(node_id, 0) == gen:
                self.on_timer(t, kind, node_id, payload)

    def bump(self, node_id: str) -> None:
        self.gen[node_id] = self.gen.get(node_id, 0) + 1

    def busy(self) -> bool:
        return self.rng.random() < BUSY_SHARE

    # -- the truth -----------------------------------------------------------------------

    def serve(self, node_id: str, start: int, end: int) -> None:
        spec = self.specs[node_id]
        k = end - start
        measured = spec.speed / k
        candidate = Candidate(node_id, "", b"", start, end, measured)
        live = Serving(start, end, true_rate(spec, k), measured, candidate)
        self.serving[node_id] = live
        self.speeds[node_id] = MeasuredSpeed(1000.0 / (live.rate * k), 1_000)
        for i in range(start, end):
            self.true[i] += live.rate

    def unserve(self, node_id: str) -> None:
        live = self.serving.pop(node_id, None)
        self.speeds.pop(node_id, None)
        if live is None:
            return
        for i in range(live.start, live.end):
            value = self.true[i] - live.rate
            self.true[i] = value if value > EMPTY else 0.0

    # -- the script ----------------------------------------------------------------------

    def arrive(self, spec: Spec, t: float, *, already_serving: bool) -> None:
        self.specs[spec.node_id] = spec
        self.place(spec, t, already_serving)

    def leave(self, node_id: str, t: float) -> None:
        spec = self.specs.pop(node_id, None)
        if spec is None:
            return
        self.unserve(node_id)
        self.bump(node_id)
        self.depart(spec, t)

    # -- the policy ----------------------------------------------------------------------

    def place(self, spec: Spec, t: float, already_serving: bool) -> None:
        raise NotImplementedError

    def depart(self, spec: Spec, t: float) -> None:
        """The policy's bookkeeping learns (or not yet) that a node left."""

    def on_timer(self, t: float, kind: str, node_id: str, payload: object) -> None:
        if kind == "ready":  # a load finished: the node serves from now on
            assert isinstance(payload, tuple)
            self.serve(node_id, *payload)


class RandomWorld(World):
    """A random window of all the node's memory; never moved."""

    def place(self, spec: Spec, t: float, already_serving: bool) -> None:
        k = min(spec.room, LAYERS)
        start = self.rng.randrange(LAYERS - k + 1)
        if already_serving:
            self.serve(spec.node_id, start, start + k)
        else:
            self.schedule(t + load_s(k), "ready", spec.node_id, (start, start + k))
