"""The swarm simulator drives the tracker's allocation: a small run, every policy measured."""

from __future__ import annotations

from benchmarks.swarm_sim import simulate


def test_a_small_swarm_run_measures_every_policy_and_allocation_beats_random() -> None:
    worlds, _wall = simulate(120, 1800.0, seed=3)
    assert set(worlds) == {"meshnet", "petals", "random"}
    meshnet, rand = worlds["meshnet"], worlds["random"]
    assert meshnet.covered_s >= rand.covered_s and meshnet.area > rand.area
    assert meshnet.routes and all(hops >= 1 and ms > 0 for hops, ms in meshnet.routes)
    assert meshnet.area <= meshnet.ideal_area * (1 + 1e-9)  # no placement beats the ceiling
