"""Prefix affinity: the planner prefers the nodes that served a prompt's prefix, but only
among the near-best of their range."""

from __future__ import annotations

import random

from tracker_service.domain.measured_speed import MeasuredSpeed
from tracker_service.domain.route_formation import Candidate, CandidatePool, RoutingPolicy
from tracker_service.services.prefix_affinity import PrefixAffinity, PrefixHint

RECIPE = ("a" * 64, "b" * 64)
SYSTEM = list(range(100, 150))  # 50 tokens: three whole blocks


def candidates(throughputs: dict[str, float]) -> list[Candidate]:
    return [
        Candidate(node_id, f"ws://{node_id}:1", b"k" * 32, 0, 4, tps)
        for node_id, tps in throughputs.items()
    ]


def measured(throughputs: dict[str, float]) -> dict[str, MeasuredSpeed]:
    """What the tracker timed of the nodes: the speeds they claim (0..4: four layers)."""
    return {node_id: MeasuredSpeed(1000.0 / (tps * 4), 16) for node_id, tps in throughputs.items()}


def pick(pool: CandidatePool, prefer: frozenset[str], seed: int) -> str:
    route = pool.form(4, latency={}, recent={}, rng=random.Random(seed), prefer=prefer)
    return route.node_ids[0]


def test_a_prompt_sharing_a_prefix_names_the_nodes_that_served_it() -> None:
    affinity = PrefixAffinity()
    affinity.record(RECIPE, [*SYSTEM, 1, 2, 3], ["n1", "n2"])
    assert affinity.nodes_for(RECIPE, [*SYSTEM, 7, 8, 9]) == {"n1", "n2"}
    assert affinity.nodes_for(("c" * 64, "d" * 64), [*SYSTEM, 7]) == frozenset()  # other recipe
    assert affinity.nodes_for(RECIPE, [999, *SYSTEM]) == frozenset()  # differs in block 0
    assert affinity.nodes_for(RECIPE, SYSTEM[:10]) == frozenset()  # shorter than a block


def test_the_hint_counts_the_tokens_the_holders_have_cached() -> None:
    affinity = PrefixAffinity()
    affinity.record(RECIPE, [*SYSTEM, 1, 2, 3], ["n1"])  # 53 tokens: three whole blocks
    assert affinity.hint_for(RECIPE, [*SYSTEM[:40], 9]) == PrefixHint(frozenset({"n1"}), 32)
    assert affinity.hint_for(RECIPE, [*SYSTEM, 1, 2, 3, 4]) == PrefixHint(frozenset({"n1"}), 48)
    assert affinity.hint_for(RECIPE, [5, 6]) == PrefixHint(frozenset(), 0)


def test_the_longest_known_prefix_wins_and_old_entries_are_forgotten() -> None:
    affinity = PrefixAffinity(max_entries=6)
    affinity.record(RECIPE, SYSTEM[:16], ["short"])
    affinity.record(RECIPE, SYSTEM[:48], ["long"])  # blocks 0..2, block 0 now "long"
    assert affinity.nodes_for(RECIPE, [*SYSTEM[:48], 5]) == {"long"}
    affinity.record(RECIPE, list(range(500, 564)), ["other"])  # 4 blocks: evicts the oldest
    assert affinity.nodes_for(RECIPE, [*SYSTEM[:48], 5]) == {"long"}  # block 2 still known
    assert affinity.nodes_for(RECIPE, [*SYSTEM[:16], 5]) == frozenset()


def test_the_planner_takes_a_preferred_node_among_equals_only() -> None:
    pool = CandidatePool(candidates({"n1": 10.0, "n2": 10.0, "n3": 10.0}), RoutingPolicy())
    assert {pick(pool, frozenset({"n2"}), seed) for seed in range(20)} == {"n2"}
    assert len({pick(pool, frozenset(), seed) for seed in range(20)}) > 1  # random otherwise
    speeds = {"fast": 10.0, "slow": 1.0}
    slow = CandidatePool(candidates(speeds), RoutingPolicy(), measured(speeds))
    assert {pick(slow, frozenset({"slow"}), seed) for seed in range(20)} == {"fast"}


def test_a_node_holding_the_prefix_stays_preferred_through_a_noisy_latency_probe() -> None:
    """Two equal nodes, one measured a few ms slower on its hop (a probe on a busy machine):
    the one holding the prefix is still taken, as its cache spares it the prefix's prefill;
    one twice as slow as the best plus a little is not."""
    pool = CandidatePool(candidates({"n1": 40.0, "n2": 40.0}), RoutingPolicy())
    noisy = {"n1": 2.6, "n2": 7.7}  # 27.6 vs 32.7 ms a token: outside the 25 % band
    for seed in range(20):
        route = pool.form(4, latency=noisy, recent={}, rng=random.Random(seed), prefer={"n2"})
        assert route.node_ids == ("n2",)
    far = {"n1": 2.6, "n2": 35.0}  # 27.6 vs 60 ms: more than twice the best
    for seed in range(20):
        route = pool.form(4, latency=far, recent={}, rng=random.Random(seed), prefer={"n2"})
        assert route.node_ids == ("n1",)


def test_a_shared_system_prompt_does_not_pile_requests_on_one_node() -> None:
    """Every chat shares its template's system prompt (one block). What that block spares
    is a few ms of prefill, less than a node busier by two sessions loses on a short answer:
    the other node of the range is taken. A long shared prefix keeps its holder."""
    pool = CandidatePool(candidates({"n1": 40.0, "n2": 40.0}), RoutingPolicy())
    busier = {"n2": 2}  # two recent sessions: 1.5 x the idle node's cost

    def first(hint: PrefixHint, new_tokens: int, seed: int) -> str:
        route = pool.form(
            4,
            latency={},
            recent=busier,
            rng=random.Random(seed),
            prefer=hint.nodes,
            prefer_slack=hint.slack(new_tokens),
        )
        return route.node_ids[0]

    system_prompt = PrefixHint(frozenset({"n2"}), 16)
    assert system_prompt.slack(6) < RoutingPolicy().slack  # no wider than the equals' band
    assert {first(system_prompt, 6, seed) for seed in range(20)} == {"n1"}
    long_prompt = PrefixHint(frozenset({"n2"}), 4096)  # an agent's tools and history
    assert long_prompt.slack(8192) > 0.5  # a generous max_tokens does not switch it off
    assert {first(long_prompt, 200, seed) for seed in range(20)} == {"n2"}
