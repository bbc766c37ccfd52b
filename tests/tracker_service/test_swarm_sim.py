"""The swarm simulator: its physics, Petals' rule as Petals runs it, MeshNet's tracker, a run."""

from __future__ import annotations

import random

from benchmarks.swarm_meshnet import STALE_S, MeshnetWorld
from benchmarks.swarm_model import Spec, true_rate
from benchmarks.swarm_petals import PetalsWorld, announced, choose_best_start
from benchmarks.swarm_sim import bound, simulate


def _spec(name: str, room: int, *, speed: float = 400.0, uplink: float = 1e9) -> Spec:
    return Spec(name, room, speed, uplink, region=0, graceful=True)


def test_petals_announces_half_a_span_per_request_while_a_request_costs_the_whole_span() -> None:
    fast = _spec("a", 3)
    assert announced(fast) == 200.0  # forward_rps / ((3 + 1) / 2)
    assert abs(true_rate(fast, 3) - 400.0 / 3) < 1e-9
    thin_uplink = _spec("b", 3, uplink=50.0)
    assert announced(thin_uplink) == true_rate(thin_uplink, 3) == 50.0


def test_petals_best_start_is_the_window_with_the_smallest_sorted_throughputs() -> None:
    assert choose_best_start([1.0, 0.0, 5.0, 5.0, 0.0, 1.0], 2) == 0
    assert choose_best_start([3.0, 2.0, 2.0, 1.0, 4.0], 2) == 2


def test_a_petals_server_stays_in_a_balanced_swarm_and_moves_into_a_hole() -> None:
    world = PetalsWorld(random.Random(0))
    for name in ("a", "b", "c"):
        world.arrive(_spec(name, 40), 0.0, already_serving=True)
    assert [world.entries[n][:2] for n in "abc"] == [(0, 40), (40, 80), (0, 40)]
    assert world._should_choose_other_blocks("c") is None
    world.leave("b", 10.0)  # a clean shutdown: withdrawn from the DHT at once
    assert min(world.true) == 0.0
    assert world._should_choose_other_blocks("c") == 40


def test_meshnet_counts_a_vanished_node_until_it_misses_its_heartbeats() -> None:
    world = MeshnetWorld(random.Random(0))
    spec = Spec("a", 10, 100.0, 1e9, region=0, graceful=False)
    world.arrive(spec, 0.0, already_serving=True)
    world.leave("a", 100.0)
    assert max(world.true) == 0.0 and "a" in world.registry  # gone, not yet known
    world.run_timers(100.0 + STALE_S)
    assert "a" not in world.registry and max(world.rates) == 0.0


def test_a_small_swarm_run_measures_every_policy_and_allocation_beats_random() -> None:
    worlds, _took = simulate(120, 1800.0, seed=3)
    assert set(worlds) == {"meshnet", "petals", "random"}
    meshnet, petals, rand = worlds["meshnet"], worlds["petals"], worlds["random"]
    assert meshnet.covered_s >= rand.covered_s and meshnet.area > rand.area
    assert petals.area > rand.area
    assert meshnet.routes and all(hops >= 1 and ms > 0 for hops, ms in meshnet.routes)
    for world in worlds.values():  # no placement beats its swarm's mean layer rate
        assert world.area <= world.ideal_area * (1 + 1e-9)
    assert bound(worlds) * petals.area >= meshnet.area * (1 - 1e-9)
