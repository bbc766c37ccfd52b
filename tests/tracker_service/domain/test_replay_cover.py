"""Allocation gives every range a node that could replay it (issue 35)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.tracker_service.conftest import make_settings, register
from tests.tracker_service.domain.test_certifying_chain import MODEL
from tests.tracker_service.helpers import FakeNode, identity_block
from tracker_service.app import create_app
from tracker_service.domain.allocation import Placement, choose_range, layer_rates
from tracker_service.domain.replay_cover import REASON_REPLAYER, choose_replayer, lone_ranges

N = 30


def test_a_range_is_lone_until_another_node_contains_it() -> None:
    head, tail = Placement(0, 15, 5.0), Placement(15, 30, 5.0)
    assert lone_ranges([head, tail]) == [(0, 15), (15, 30)]
    assert lone_ranges([head, tail, Placement(0, 15, 5.0)]) == [(15, 30)]
    assert lone_ranges([head, tail, Placement(0, 30, 5.0)]) == [(0, 30)]  # the whole one
    assert lone_ranges([Placement(0, 30, 5.0), Placement(0, 30, 5.0)]) == []


def test_a_node_that_can_hold_the_whole_model_checks_both_halves_at_once() -> None:
    halves = [Placement(0, 15, 5.0), Placement(15, 30, 5.0)]
    choice = choose_replayer(N, halves, max_layers=30, speed=100.0)
    assert choice is not None
    assert (choice.start, choice.end, choice.reason) == (0, 30, REASON_REPLAYER)
    assert "0–15, 15–30" in choice.sentence


def test_a_smaller_node_is_sent_to_contain_a_lone_range_instead_of_spreading_thin() -> None:
    # Head held twice, tail once: spreading would put the node where the swarm is slowest
    # (the tail, here too), but a node with room for 15 layers must contain 15-30 exactly.
    placements = [Placement(0, 15, 5.0), Placement(0, 15, 5.0), Placement(15, 30, 20.0)]
    spread = choose_range(N, layer_rates(N, placements), max_layers=20, speed=100.0)
    assert (spread.start, spread.end) != (15, 30)  # load alone would not cover the tail
    choice = choose_replayer(N, placements, max_layers=20, speed=100.0)
    assert choice is not None and choice.start is not None and choice.end is not None
    assert choice.start <= 15 and choice.end == 30
    assert "15–30" in choice.sentence


def test_the_window_that_checks_the_most_lone_ranges_wins() -> None:
    placements = [
        Placement(0, 10, 5.0),
        Placement(10, 20, 5.0),
        Placement(20, 30, 5.0),
        Placement(0, 10, 5.0),  # 0-10 is held twice
    ]
    choice = choose_replayer(N, placements, max_layers=20, speed=100.0)
    assert choice is not None
    assert (choice.start, choice.end) == (10, 30)  # contains 10-20 and 20-30


def test_no_choice_when_every_range_has_a_replayer_or_none_fits() -> None:
    assert (
        choose_replayer(N, [Placement(0, 30, 5.0), Placement(0, 30, 5.0)], max_layers=30, speed=1.0)
        is None
    )
    # A node with room for 10 layers cannot contain a 15-layer range.
    assert (
        choose_replayer(
            N, [Placement(0, 15, 5.0), Placement(15, 30, 5.0)], max_layers=10, speed=1.0
        )
        is None
    )


@pytest.mark.parametrize("trusted", [False, True])
def test_the_endpoint_asks_a_newcomer_to_check_lone_ranges_unless_the_operator_trusts_them(
    tmp_path: Path, trusted: bool
) -> None:
    app = create_app(make_settings(tmp_path, background_tasks=False, trust_lone_ranges=trusted))
    with TestClient(app) as client:
        for start, end in [(0, 15), (15, 30)]:
            assert register(client, FakeNode(), identity_block(start, end)).status_code == 200
        asked = client.get(
            "/api/v1/allocation",
            params={"model": MODEL, "max_layers": 30, "node_id": "c" * 32},
        )
        assert asked.status_code == 200, asked.text
        data = asked.json()
        if trusted:
            assert data["reason"] != REASON_REPLAYER
        else:
            assert (data["reason"], data["start"], data["end"]) == (REASON_REPLAYER, 0, 30)
    app.state.tracker.database.dispose()
