"""Allocation keeps a chain the certifier accepts: two whole-model nodes must certify."""

from __future__ import annotations

import math
import random

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
from tracker_service.domain.certifying_chain import completing_windows, has_certifying_chain
from tracker_service.domain.route_formation import Candidate, NoRoute, form_route

MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"


def _forms_certify_route(layer_count: int, ranges: list[tuple[int, int]]) -> bool:
    """What route formation (the certifier's min_nodes=2) says of these ranges."""
    candidates = [
        Candidate(f"n{i}", f"ws://127.0.0.1:{9000 + i}", b"k", s, e, 1.0)
        for i, (s, e) in enumerate(ranges)
    ]
    try:
        route = form_route(candidates, layer_count, min_nodes=2, rng=random.Random(1))
    except NoRoute:
        return False
    return len(set(route.node_ids)) >= 2


def test_the_chain_check_agrees_with_route_formation_on_random_layouts() -> None:
    rng = random.Random(7)
    for _ in range(400):
        n = rng.randint(1, 4)
        ranges = []
        for _ in range(n):
            start = rng.randint(0, 9)
            ranges.append((start, rng.randint(start + 1, 10)))
        assert has_certifying_chain(10, ranges) == _forms_certify_route(10, ranges), ranges


def test_whole_model_nodes_alone_never_form_a_chain_but_a_hop_may_start_inside_a_shard() -> None:
    assert not has_certifying_chain(30, [(0, 30), (0, 30), (0, 30)])
    assert has_certifying_chain(30, [(0, 30), (0, 29)])  # 0-29, then the other from 29
    assert has_certifying_chain(30, [(0, 20), (10, 30)])
    assert not has_certifying_chain(30, [(0, 15), (16, 30)])
    assert not has_certifying_chain(30, [(0, 30), (5, 30)])  # no hop ends before 30 from 0


def test_a_second_whole_model_node_gets_the_range_that_completes_a_chain() -> None:
    choice = choose_completing(
        30, [Placement(0, 30, 2.0)], max_layers=30, speed=60.0, uplink=math.inf, model="m"
    )
    assert choice is not None and choice.reason == REASON_CHAIN
    assert (choice.start, choice.end) == (0, 29)
    assert choice.holes_after == 0 and "chain of two or more" in choice.sentence
    assert _forms_certify_route(30, [(0, 30), (0, 29)])
    # A smaller node completes it too, as far as its memory reaches.
    small = choose_completing(
        30, [Placement(0, 30, 2.0)], max_layers=10, speed=60.0, uplink=math.inf, model="m"
    )
    assert small is not None and (small.start, small.end) == (0, 10)


def test_no_chain_move_is_asked_when_one_exists_or_cannot_be_made() -> None:
    existing = [Placement(0, 15, 1.0), Placement(15, 30, 1.0)]
    assert choose_completing(30, existing, max_layers=30, speed=1.0, uplink=1.0, model="m") is None
    assert choose_completing(30, [], max_layers=30, speed=1.0, uplink=1.0, model="m") is None
    # A 12-layer node after [0, 12) cannot reach layer 30: no window completes a chain.
    assert completing_windows(30, [(0, 12)], 12) == []


def _ask(client: TestClient, **params: object) -> dict[str, object]:
    response = client.get("/api/v1/allocation", params={"model": MODEL, **params})
    assert response.status_code == 200, response.text
    data: dict[str, object] = response.json()
    return data


def test_the_endpoint_gives_the_second_whole_model_node_a_certifying_range(
    client: TestClient,
) -> None:
    first = FakeNode()
    assert register(client, first, identity_block(0, 30)).status_code == 200
    # The first node asking again (a restart) is not told to complete a chain with itself.
    again = _ask(client, max_layers=30, node_id=first.node_id)
    assert (again["start"], again["end"]) == (0, 30) and again["reason"] != "chain"
    data = _ask(client, max_layers=30, node_id="b" * 32)
    assert data["reason"] == "chain" and (data["start"], data["end"]) == (0, 29)


def test_three_whole_model_newcomers_asking_together_leave_a_chain(client: TestClient) -> None:
    answers = [_ask(client, max_layers=30, layer_count=30, node_id=c * 32) for c in "abc"]
    ranges = [(int(str(a["start"])), int(str(a["end"]))) for a in answers]
    assert ranges[0] == (0, 30) and answers[1]["reason"] == "chain"
    assert has_certifying_chain(30, ranges) and answers[2]["reason"] != "chain"


def test_rebalancing_sends_an_idle_node_to_complete_a_chain() -> None:
    moves = plan_moves(30, [Slot("a", 0, 30, 1.0), Slot("b", 0, 30, 1.0)])
    assert len(moves) == 1 and (moves[0].start, moves[0].end) == (0, 29)
    assert "chain of two or more" in moves[0].sentence
    # A node with open sessions is never the one moved.
    busy = plan_moves(30, [Slot("a", 0, 30, 1.0, open_sessions=1), Slot("b", 0, 30, 1.0)])
    assert [m.node_id for m in busy] == ["b"]


def test_rebalancing_never_breaks_the_last_chain() -> None:
    # "c" on [0, 15) is the only hop that ends before 30; moving it to [15, 30) would
    # lift the bottleneck (layers 15-30 are thin) but leave no chain to certify with.
    slots = [Slot("a", 0, 30, 1.0), Slot("c", 0, 15, 10.0)]
    assert has_certifying_chain(30, [(0, 30), (0, 15)])
    assert plan_moves(30, slots, margin=0.05) == []
    # With a second short hop the same gain is allowed: a chain survives the move.
    more = [*slots, Slot("d", 0, 20, 10.0)]
    moves = plan_moves(30, more, margin=0.05)
    assert moves and has_certifying_chain(
        30, [(m.start, m.end) for m in moves] + [(0, 30), (0, 20), (0, 15)]
    )
