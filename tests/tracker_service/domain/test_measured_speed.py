"""The speed estimate route formation weighs: measured, the median for a newcomer, and
a claim that can only lower it (domain/measured_speed.py)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from tracker_service.domain.measured_speed import (
    MIN_MS_PER_LAYER,
    MeasuredSpeed,
    blend,
    estimated_throughputs,
    reference_ms_per_layer,
    step_sample,
)
from tracker_service.domain.route_formation import (
    Candidate,
    CandidatePool,
    RecentAssignments,
    RoutingPolicy,
)

LAYERS = 30


def node(name: str, claim: float, start: int = 0, end: int = LAYERS) -> Candidate:
    return Candidate(name, f"ws://{name}", b"k" * 32, start, end, claim)


def at(tokens_per_s: float, layers: int = LAYERS, steps: int = 16) -> MeasuredSpeed:
    """A measurement of `tokens_per_s` through `layers` layers."""
    return MeasuredSpeed(1000.0 / (tokens_per_s * layers), steps)


def estimate(candidates: list[Candidate], measured: dict[str, MeasuredSpeed]) -> list[float]:
    return estimated_throughputs(candidates, measured, min_steps=4, unknown=1.0)


def test_a_step_is_costed_per_layer_it_ran() -> None:
    assert step_sample(0.05, 30) == pytest.approx(50.0 / 30)
    assert step_sample(0.0, 30) == MIN_MS_PER_LAYER  # a clock artefact, not a speed
    assert at(20.0).tokens_per_s(LAYERS) == pytest.approx(20.0)
    assert at(20.0).tokens_per_s(15) == pytest.approx(40.0)  # half the layers, twice as fast


def test_blending_a_batch_is_blending_its_steps_one_by_one() -> None:
    first = blend(None, 10.0, 3, alpha=0.1)
    assert first == MeasuredSpeed(10.0, 3)  # the first batch is the measurement
    one_by_one = first
    for _ in range(5):
        one_by_one = blend(one_by_one, 20.0, 1, alpha=0.1)
    at_once = blend(first, 20.0, 5, alpha=0.1)
    assert at_once.ms_per_layer == pytest.approx(one_by_one.ms_per_layer)
    assert at_once.steps == one_by_one.steps == 8
    assert 10.0 < at_once.ms_per_layer < 20.0
    assert blend(first, 99.0, 0, alpha=0.1) == first  # no steps, no change


def test_a_claim_above_the_measurement_is_ignored_and_one_below_lowers_it() -> None:
    liar, modest, honest = node("liar", 1e12), node("modest", 5.0), node("honest", 20.0)
    measured = {"liar": at(18.0), "modest": at(20.0), "honest": at(20.0)}
    assert estimate([liar, modest, honest], measured) == pytest.approx([18.0, 5.0, 20.0])


def test_a_newcomer_is_costed_at_the_median_of_the_measured_per_layer() -> None:
    measured = {"a": at(10.0), "b": at(20.0), "c": at(30.0)}
    peers = [node(n, 25.0) for n in "abc"]
    newcomer, half, silent = node("new", 1e12), node("half", 1e12, 0, 15), node("silent", 0.0)
    got = estimate([*peers, newcomer, half, silent], measured)
    assert got[3] == pytest.approx(20.0)  # the median, not its claim
    assert got[4] == pytest.approx(40.0)  # the median per layer, over its 15 layers
    assert got[5] == pytest.approx(20.0)  # no claim at all: the median, not starved
    assert estimate([*peers, node("low", 3.0)], measured)[3] == 3.0  # its claim is lower


def test_too_few_steps_is_not_yet_a_measurement() -> None:
    peers = [node(n, 20.0) for n in "abc"]
    newcomer = node("new", 20.0)
    measured = {n: at(20.0) for n in "abc"} | {"new": at(1e6, steps=3)}
    assert estimate([*peers, newcomer], measured)[3] == pytest.approx(20.0)


def test_with_nothing_measured_one_liar_cannot_move_the_median_of_claims() -> None:
    candidates = [node(n, 20.0) for n in "abcdefghi"] + [node("liar", 1e12)]
    assert estimate(candidates, {})[-1] == pytest.approx(20.0)
    assert reference_ms_per_layer(candidates, {}, min_steps=4) == pytest.approx(1000 / (20 * 30))
    assert estimated_throughputs([node("x", 0.0)], {}, min_steps=4, unknown=1.0) == [1.0]


def test_the_pool_gives_a_measured_claimant_only_its_share() -> None:
    candidates = [node(f"h{i}", 20.0) for i in range(9)] + [node("liar", 1e12)]
    measured = {c.node_id: at(20.0) for c in candidates} | {"liar": at(18.0)}
    pool = CandidatePool(candidates, RoutingPolicy(), measured)
    assert pool.throughput_of("liar") == pytest.approx(18.0)
    rng, recent = random.Random(7), RecentAssignments()
    served: Counter[str] = Counter()
    for _ in range(1000):
        route = pool.form(LAYERS, latency={}, recent=recent.snapshot(), rng=rng)
        recent.add(route.node_ids)
        served.update(route.node_ids)
    assert served["liar"] <= 150, served
    # With nothing measured yet, the median of the claims caps the claim.
    claimed = CandidatePool(candidates, RoutingPolicy())
    assert claimed.throughput_of("liar") == pytest.approx(20.0)  # median of the claims
