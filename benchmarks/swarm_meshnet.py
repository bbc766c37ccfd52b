"""MeshNet's policy, run by the tracker's and the node's own code.

What the tracker knows is its registry: each registered node's range, the
tokens/s through its shard the node measured (compute only: the tracker does
not know the node's uplink), its memory when it asks, and its open sessions
in each heartbeat. A newcomer asks ``choose_range`` over the registry plus
:class:`~tracker_service.services.rebalancing.PendingPlacements`, loads its layers,
runs the doctor and the gate, and registers. Every ``rebalance_poll_s`` the
:class:`~tracker_service.services.rebalancing.RebalanceBoard` plans; a node told to move
acts on one of its next heartbeats if ``core.doctor.placement_advice.should_move`` agrees.
A node that vanishes stays registered until it misses three heartbeats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from benchmarks.swarm_model import LAYERS, Spec, load_s
from benchmarks.swarm_worlds import World
from core.doctor.placement_advice import should_move
from tracker_service.config import Settings
from tracker_service.domain.allocation import Placement, Slot, choose_range
from tracker_service.services.rebalancing import PendingPlacements, RebalanceBoard
from tracker_service.store.allocation import ServingGroup

KEY = ("model-digest", "recipe-digest")
GATE_S = 20.0  # the doctor and the gate after every load
DWELL_S = 600.0  # core.node.settings.NodeSettings.move_dwell_s
_SETTINGS = Settings()
HEARTBEAT_S = _SETTINGS.heartbeat_interval_s
STALE_S = HEARTBEAT_S * _SETTINGS.missed_heartbeats
REBALANCE_POLL_S = _SETTINGS.rebalance_poll_s
REBALANCE_MARGIN = _SETTINGS.rebalance_margin
REBALANCE_GRACE_S = _SETTINGS.rebalance_grace_s


@dataclass
class Registered:
    start: int
    end: int
    rate: float  # measured tokens/s through the shard
    since: float


@dataclass
class MeshnetWorld(World):
    name: str = "meshnet"
    knows_uplink: bool = False  # what-if: nodes report their uplink (they do not today)
    now: float = 0.0
    registry: dict[str, Registered] = field(default_factory=dict)
    registered: set[str] = field(default_factory=set)
    rates: list[float] = field(default_factory=lambda: [0.0] * LAYERS)  # the registry's sums
    board: RebalanceBoard = field(default_factory=RebalanceBoard)
    pending: PendingPlacements = field(init=False)

    def __post_init__(self) -> None:
        self.pending = PendingPlacements(clock=lambda: self.now)
        self.schedule(REBALANCE_POLL_S, "rebalance", "", always=True)

    def _rate(self, spec: Spec, length: int) -> float:
        """The tokens/s the node reports through a shard of this length."""
        return min(spec.speed / length, spec.uplink) if self.knows_uplink else spec.speed / length

    def _register(self, node_id: str, start: int, end: int, t: float) -> None:
        rate = self._rate(self.specs[node_id], end - start)
        self.registry[node_id] = Registered(start, end, rate, t)
        self.registered.add(node_id)
        for i in range(start, end):
            self.rates[i] += rate

    def _deregister(self, node_id: str) -> None:
        entry = self.registry.pop(node_id, None)
        self.registered.discard(node_id)
        if entry is None:
            return
        for i in range(entry.start, entry.end):
            value = self.rates[i] - entry.rate
            self.rates[i] = value if value > 1e-9 else 0.0

    def place(self, spec: Spec, t: float, already_serving: bool) -> None:
        self.now = t
        delta = [0.0] * (LAYERS + 1)  # the pending suggestions, as a difference array
        for start, end, rate in self.pending.live(KEY, self.registered):
            delta[start] += rate
            delta[end] -= rate
        rates, running = [], 0.0
        for registered, change in zip(self.rates, delta[:LAYERS], strict=True):
            running += change
            value = registered + running
            rates.append(value if value > 1e-9 else 0.0)
        uplink = spec.uplink if self.knows_uplink else math.inf
        choice = choose_range(LAYERS, rates, max_layers=spec.room, speed=spec.speed, uplink=uplink)
        assert choice.start is not None and choice.end is not None
        start, end = choice.start, choice.end
        if already_serving:
            self._register(spec.node_id, start, end, t - self.rng.uniform(0.0, 2 * DWELL_S))
            self.serve(spec.node_id, start, end)
            return
        self.pending.add(KEY, spec.node_id, Placement(start, end, self._rate(spec, end - start)))
        self.schedule(t + load_s(end - start) + GATE_S, "ready", spec.node_id, (start, end))

    def depart(self, spec: Spec, t: float) -> None:
        if spec.graceful:
            self._deregister(spec.node_id)
        else:
            self.schedule(
                t + self.rng.uniform(STALE_S - HEARTBEAT_S, STALE_S),
                "expire",
                spec.node_id,
                always=True,
            )

    def on_timer(self, t: float, kind: str, node_id: str, payload: object) -> None:
        self.now = t
        if kind == "ready":
            assert isinstance(payload, tuple)
            start, end = payload
            self._register(node_id, start, end, t)
            self.serve(node_id, start, end)
        elif kind == "expire":
            if node_id not in self.specs:
                self._deregister(node_id)
        elif kind == "rebalance":
            self._plan(t)
            self.schedule(t + REBALANCE_POLL_S, "rebalance", "", always=True)
        elif kind == "heartbeat":
            assert isinstance(payload, tuple)
            self._consider(t, node_id, payload)

    def _plan(self, t: float) -> None:
        slots = tuple(
            Slot(node_id, r.start, r.end, r.rate, open_sessions=int(self.busy()))
            for node_id, r in self.registry.items()
        )
        group = ServingGroup(KEY, "model", "recipe", LAYERS, slots)
        moves = self.board.plan([group], now=t, margin=REBALANCE_MARGIN, grace_s=REBALANCE_GRACE_S)
        offset = self.rng.uniform(0.0, HEARTBEAT_S)
        for node_id, move in moves.items():
            # The suggestion rides every heartbeat until the next plan.
            for beat in range(int(REBALANCE_POLL_S / HEARTBEAT_S)):
                target = (move.start, move.end)
                self.schedule(t + offset + beat * HEARTBEAT_S, "heartbeat", node_id, target)

    def _consider(self, t: float, node_id: str, target: tuple[int, int]) -> None:
        entry = self.registry.get(node_id)
        if entry is None or node_id not in self.specs:
            return
        move, _why = should_move(
            target,
            (entry.start, entry.end),
            pinned=False,
            open_sessions=int(self.busy()),
            serving_for_s=t - entry.since,
            dwell_s=DWELL_S,
        )
        if not move:
            return
        # relocate(): leave routing, reload, doctor and gate, register at the new range.
        self.moves += 1
        self._deregister(node_id)
        self.unserve(node_id)
        self.bump(node_id)
        self.schedule(t + load_s(target[1] - target[0]) + GATE_S, "ready", node_id, target)
