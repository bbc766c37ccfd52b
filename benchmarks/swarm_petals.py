"""Petals' rule, as ``petals/server/{server,block_selection,throughput}.py`` run it.

What a Petals server knows is the DHT: every server's span and the one
throughput it announced. It decides on that alone; the real rates (what the
simulator measures the bottleneck on) can differ from the announced ones:

- announced: ``min(forward_rps / ((num_blocks + 1) / 2), network_rps)`` (Petals
  assumes a request uses half the span on average); real, when routes cross
  the whole span: ``min(speed / num_blocks, uplink)``;
- a server counts from the moment it starts loading (``JOINING``), before it
  serves; a server that vanishes counts until its record expires
  (``update_period`` 120 s, ``expiration`` 240 s: 120 to 240 s later); one that
  shuts down cleanly is withdrawn at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from benchmarks.swarm_model import LAYERS, Spec, load_s
from benchmarks.swarm_worlds import World

BALANCE_QUALITY = 0.75
MEAN_BALANCE_CHECK_PERIOD_S = 120.0
UPDATE_PERIOD_S = 120.0  # run_server's --update_period default
EXPIRATION_S = 240.0  # max(2 * update_period, MAX_DHT_TIME_DISCREPANCY_SECONDS)
EPS = 1e-3


def announced(spec: Spec) -> float:
    """``get_server_throughput``: one number for every block of the span."""
    blocks = min(spec.room, LAYERS)
    return min(spec.speed / ((blocks + 1) / 2), spec.uplink)


def choose_best_start(throughputs: list[float], num_blocks: int) -> int:
    """``_choose_best_start``: the window whose sorted throughputs are smallest."""
    options = (
        (sorted(throughputs[i : i + num_blocks]), i)
        for i in range(len(throughputs) - num_blocks + 1)
    )
    return min(options)[-1]


@dataclass
class PetalsWorld(World):
    name: str = "petals"
    view: list[float] = field(default_factory=lambda: [0.0] * LAYERS)  # the DHT's sums
    view_total: float = 0.0
    entries: dict[str, tuple[int, int, float]] = field(default_factory=dict)

    def _declare(self, node_id: str, start: int, end: int, throughput: float) -> None:
        self._withdraw(node_id)
        self.entries[node_id] = (start, end, throughput)
        for i in range(start, end):
            self.view[i] += throughput
        self.view_total += throughput * (end - start)

    def _withdraw(self, node_id: str) -> None:
        entry = self.entries.pop(node_id, None)
        if entry is None:
            return
        start, end, throughput = entry
        for i in range(start, end):
            value = self.view[i] - throughput
            self.view[i] = value if value > 1e-9 else 0.0
        self.view_total -= throughput * (end - start)

    def _next_check(self, t: float, node_id: str) -> None:
        self.schedule(t + self.rng.random() * 2 * MEAN_BALANCE_CHECK_PERIOD_S, "check", node_id)

    def place(self, spec: Spec, t: float, already_serving: bool) -> None:
        k = min(spec.room, LAYERS)  # num_blocks: as many as memory allows
        start = choose_best_start(self.view, k)
        self._declare(spec.node_id, start, start + k, announced(spec))
        if already_serving:
            self.serve(spec.node_id, start, start + k)
            self._next_check(t, spec.node_id)
        else:
            self.schedule(t + load_s(k), "ready", spec.node_id, (start, start + k))

    def depart(self, spec: Spec, t: float) -> None:
        if spec.graceful:
            self._withdraw(spec.node_id)
        else:
            stale = UPDATE_PERIOD_S + self.rng.random() * (EXPIRATION_S - UPDATE_PERIOD_S)
            self.schedule(t + stale, "expire", spec.node_id, always=True)

    def on_timer(self, t: float, kind: str, node_id: str, payload: object) -> None:
        if kind == "ready":
            super().on_timer(t, kind, node_id, payload)
            self._next_check(t, node_id)
        elif kind == "expire":
            if node_id not in self.specs:
                self._withdraw(node_id)
        elif kind == "check":
            target = self._should_choose_other_blocks(node_id)
            if target is None:
                self._next_check(t, node_id)
                return
            # The server stops serving, announces its new span and loads it.
            self.moves += 1
            self.interrupted += int(self.busy())
            self.unserve(node_id)
            self.bump(node_id)
            start, end, throughput = self.entries[node_id]
            k = end - start
            self._declare(node_id, target, target + k, throughput)
            self.schedule(t + load_s(k), "ready", node_id, (target, target + k))

    def _should_choose_other_blocks(self, node_id: str) -> int | None:
        """``should_choose_other_blocks``: the new start, or None to stay.

        Petals compares the current minimum with the minimum after simulating
        every server re-choosing. Blocks are only moved, never added, so that
        minimum never exceeds the mean announced layer rate: when the current
        minimum is within ``balance_quality`` of the mean no move can pass
        (exact), and otherwise the mean stands in for the simulated minimum
        (the server is then, if anything, a little more willing to move).
        """
        view = self.view
        initial = min(view)
        mean = self.view_total / LAYERS
        if initial >= (BALANCE_QUALITY - EPS) * mean:
            return None
        start, end, throughput = self.entries[node_id]
        trial = list(view)
        for i in range(start, end):
            trial[i] -= throughput * (1 + EPS)
        if initial > EPS and min(trial) <= 0:
            return None  # switching blocks would make the swarm disjoint
        new_start = choose_best_start(trial, end - start)
        if new_start == start:
            return None
        if mean < initial or mean < EPS:
            return None
        return new_start if initial / mean < BALANCE_QUALITY - EPS else None
