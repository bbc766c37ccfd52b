"""Allocation keeps a chain the certifier accepts: two whole-model nodes must certify."""

from __future__ import annotations

import math
import random
from typing import Any

from fastapi.testclient import TestClient

from tests.tracker_service.conftest import register
from tests.tracker_service.helpers import FakeNode, identity_block
from tracker_service.domain.allocation import (
    REASON_CHAIN,
    Placement,
    Slot,
    choose_completing,
    plan_moves,
)
from tracker_service.domain.certifying_chain import (
    certifying_hops,
    completing_windows,
    has_certifying_chain,
)
from tracker_service.domain.replay_cover import choose_replayer

MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"


def _brute_chain(layer_count: int, ranges: list[tuple[int, int]]) -> bool:
    """Every chain of distinct ranges, each hop starting where the previous stopped
    (inside its shard) and stopping anywhere after that inside its shard."""

    def walk(position: int, used: frozenset[int]) -> bool:
        if position == layer_count:
            return len(used) >= 2
        for i, (s, e) in enumerate(ranges):
            if i in used or not s <= position < e:
                continue
            if any(walk(stop, used | {i}) for stop in range(position + 1, e + 1)):
                return True
        return False

    return walk(0, frozenset())


def _check_hops(layer_count: int, ranges: list[tuple[int, int]]) -> None:
    hops = certifying_hops(layer_count, ranges)
    assert (hops is not None) == _brute_chain(layer_count, ranges), ranges
    if hops is None:
        return
    assert len(hops) >= 2 and len({i for i, _, _ in hops}) == len(hops), hops
    assert hops[0][1] == 0 and hops[-1][2] == layer_count, hops
    for (i, start, stop), after in zip(hops, [*hops[1:], None], strict=True):
        assert ranges[i][0] <= start < stop <= ranges[i][1], (ranges, hops)
        assert after is None or after[1] == stop, hops


def test_the_chain_rule_agrees_with_every_chain_of_distinct_nodes_on_random_layouts() -> None:
    rng = random.Random(7)
    for _ in range(400):
        n = rng.randint(1, 4)
        ranges = []
        for _ in range(n):
            start = rng.randint(0, 9)
            ranges.append((start, rng.randint(start + 1, 10)))
        _check_hops(10, ranges)
        assert has_certifying_chain(10, ranges) == _brute_chain(10, ranges), ranges


def test_hops_may_stop_inside_their_shards_so_two_whole_model_nodes_form_a_chain() -> None:
    assert has_certifying_chain(30, [(0, 30), (0, 30)])  # A [0, 1), B [1, 30)
    hops = certifying_hops(30, [(0, 30), (0, 30)])
    assert hops is not None and [i for i, _, _ in hops] == [0, 1] and hops[0][1:] == (0, 1)
    assert has_certifying_chain(30, [(0, 30), (0, 29)])
    assert has_certifying_chain(30, [(0, 30), (5, 30)])  # A stops at 5
    assert has_certifying_chain(30, [(0, 20), (10, 30)])
    # One node alone never certifies, nor does a hole, nor a node A must run around.
    assert not has_certifying_chain(30, [(0, 30)])
    assert not has_certifying_chain(30, [(0, 15), (16, 30)])
    assert not has_certifying_chain(30, [(0, 30), (5, 10)])  # A, B, then A again
    assert not has_certifying_chain(1, [(0, 1), (0, 1)])  # no layer to stop inside


def test_a_second_whole_model_node_gets_the_whole_model() -> None:
    """Both then replay each other: no lone range, and a chain A [0, k) + B [k, 30)."""
    first = [Placement(0, 30, 2.0)]
    choice = choose_completing(30, first, max_layers=30, speed=60.0, uplink=math.inf, model="m")
    assert choice is not None and choice.reason == REASON_CHAIN
    assert (choice.start, choice.end) == (0, 30)
    assert choice.holes_after == 0 and "chain of two or more" in choice.sentence
    # The audit allocation agrees: the first node's range is lone, the same range covers it.
    cover = choose_replayer(30, first, max_layers=30, speed=60.0)
    assert cover is not None and (cover.start, cover.end) == (0, 30)
    # A smaller node completes it too, as far as its memory reaches.
    small = choose_completing(30, first, max_layers=10, speed=60.0, uplink=math.inf, model="m")
    assert (
        small is not None
        and small.end is not None
        and has_certifying_chain(30, [(0, 30), (small.start or 0, small.end)])
    )


def test_no_chain_move_is_asked_when_one_exists_or_cannot_be_made() -> None:
    existing = [Placement(0, 15, 1.0), Placement(15, 30, 1.0)]
    assert choose_completing(30, existing, max_layers=30, speed=1.0, uplink=1.0, model="m") is None
    two_whole = [Placement(0, 30, 1.0), Placement(0, 30, 1.0)]
    assert choose_completing(30, two_whole, max_layers=30, speed=1.0, uplink=1.0, model="m") is None
    assert choose_completing(30, [], max_layers=30, speed=1.0, uplink=1.0, model="m") is None
    # A 12-layer node after [0, 12) cannot reach layer 30: no window completes a chain.
    assert completing_windows(30, [(0, 12)], 12) == []


def _ask(client: TestClient, **params: Any) -> dict[str, object]:
    response = client.get("/api/v1/allocation", params={"model": MODEL, **params})
    assert response.status_code == 200, response.text
    data: dict[str, object] = response.json()
    return data


def test_the_endpoint_gives_the_second_whole_model_node_the_whole_model(
    client: TestClient,
) -> None:
    first = FakeNode()
    assert register(client, first, identity_block(0, 30)).status_code == 200
    # The first node asking again (a restart) is not told to complete a chain with itself.
    again = _ask(client, max_layers=30, node_id=first.node_id)
    assert (again["start"], again["end"]) == (0, 30) and again["reason"] != "chain"
    data = _ask(client, max_layers=30, node_id="b" * 32)
    assert data["reason"] == "chain" and (data["start"], data["end"]) == (0, 30)


def test_three_whole_model_newcomers_asking_together_leave_a_chain(client: TestClient) -> None:
    answers = [_ask(client, max_layers=30, layer_count=30, node_id=c * 32) for c in "abc"]
    ranges = [(int(str(a["start"])), int(str(a["end"]))) for a in answers]
    assert ranges[0] == (0, 30) and answers[1]["reason"] == "chain"
    assert has_certifying_chain(30, ranges) and answers[2]["reason"] != "chain"


def test_rebalancing_leaves_two_whole_model_nodes_alone() -> None:
    # They already form a chain (A [0, k) + B [k, 30)) and replay each other.
    assert plan_moves(30, [Slot("a", 0, 30, 1.0), Slot("b", 0, 30, 1.0)]) == []


def test_rebalancing_sends_an_idle_node_to_complete_a_chain() -> None:
    # [0, 30) and [5, 10): A would have to run around B; B is moved to complete a chain.
    moves = plan_moves(30, [Slot("a", 0, 30, 1.0), Slot("b", 5, 10, 1.0)])
    assert len(moves) == 1 and moves[0].node_id == "b" and moves[0].urgent
    assert has_certifying_chain(30, [(0, 30), (moves[0].start, moves[0].end)])
    assert "chain of two or more" in moves[0].sentence


def test_rebalancing_never_breaks_the_last_chain() -> None:
    rng = random.Random(3)
    for _ in range(200):
        slots = []
        for n in range(rng.randint(2, 4)):
            start = rng.randint(0, 9)
            end = rng.randint(start + 1, 10)
            slots.append(Slot(f"n{n}", start, end, rng.choice([1.0, 5.0, 10.0])))
        ranges = {s.node_id: (s.start, s.end) for s in slots}
        if not has_certifying_chain(10, ranges.values()):
            continue
        for move in plan_moves(10, slots, margin=0.05):
            ranges[move.node_id] = (move.start, move.end)
        assert has_certifying_chain(10, ranges.values()), (slots, ranges)
