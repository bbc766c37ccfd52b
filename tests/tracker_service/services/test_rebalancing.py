"""Rebalancing: clear gains only, idle nodes only, no flapping, on the heartbeat reply."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.tracker_service.conftest import beat, register
from tests.tracker_service.helpers import FakeNode, identity_block
from tracker_service.domain.allocation import Move, Placement, Slot, plan_moves
from tracker_service.services.rebalancing import PENDING_TTL_S, PendingPlacements, RebalanceBoard
from tracker_service.store.allocation import ServingGroup

KEY = ("a" * 64, "b" * 64)


def _group(slots: list[Slot]) -> ServingGroup:
    return ServingGroup(KEY, "m", "r", 30, tuple(slots))


def _apply(slots: list[Slot], moves: dict[str, Move]) -> list[Slot]:
    return [
        s._replace(start=moves[s.node_id].start, end=moves[s.node_id].end)
        if s.node_id in moves
        else s
        for s in slots
    ]


def test_a_move_that_closes_a_hole_is_suggested_to_one_node_only() -> None:
    slots = [Slot("a", 0, 15, 10.0), Slot("b", 0, 15, 10.0)]
    moves = plan_moves(30, slots)
    assert len(moves) == 1 and (moves[0].start, moves[0].end) == (15, 30)
    assert "closes 15 uncovered layer(s)" in moves[0].sentence
    assert moves[0].urgent  # the model serves no one until it is made


def test_a_move_that_only_raises_the_bottleneck_is_not_urgent() -> None:
    slots = [Slot("a", 0, 30, 10.0), Slot("b", 0, 15, 10.0), Slot("c", 0, 15, 1.0)]
    (move,) = plan_moves(30, slots, margin=0.05)
    assert not move.urgent


def test_a_node_with_open_sessions_is_never_moved() -> None:
    slots = [Slot("a", 0, 15, 10.0, open_sessions=2), Slot("b", 0, 15, 10.0, open_sessions=1)]
    assert plan_moves(30, slots) == []
    moves = plan_moves(30, [slots[0], slots[1]._replace(open_sessions=0)])
    assert [m.node_id for m in moves] == ["b"]


def test_a_small_gain_does_not_move_anyone() -> None:
    # Bottleneck 10 at layers 15-30; a move of "c" would give at most 10 -> 11.
    slots = [Slot("a", 0, 30, 10.0), Slot("b", 0, 15, 10.0), Slot("c", 0, 15, 1.0)]
    assert plan_moves(30, slots, margin=0.2) == []
    assert [m.node_id for m in plan_moves(30, slots, margin=0.05)] == ["c"]


def test_two_idle_nodes_do_not_swap_back_and_forth() -> None:
    """Both nodes sit on the same half: one moves, then the board stays quiet."""
    board = RebalanceBoard()
    slots = [Slot("a", 0, 15, 10.0), Slot("b", 0, 15, 10.0)]
    moved: list[str] = []
    now = 0.0
    for _round in range(20):
        moves = board.plan([_group(slots)], now=now, margin=0.2, grace_s=60.0)
        moved += list(moves)
        slots = _apply(slots, moves)
        now += 10.0
    assert len(moved) == 1
    assert sorted((s.start, s.end) for s in slots) == [(0, 15), (15, 30)]


def test_a_node_on_its_way_holds_its_target_so_nobody_else_is_sent_there() -> None:
    board = RebalanceBoard()
    slots = [Slot("a", 0, 15, 10.0), Slot("b", 0, 15, 10.0), Slot("c", 0, 15, 10.0)]
    first = board.plan([_group(slots)], now=0.0, margin=0.2, grace_s=60.0)
    (mover,) = first
    # The mover deregistered to reload its shard: the hole it targets is still open.
    in_transit = [s for s in slots if s.node_id != mover]
    assert board.plan([_group(in_transit)], now=5.0, margin=0.2, grace_s=60.0) == {}
    # Past the grace period the target counts as a hole again and someone is sent.
    assert len(board.plan([_group(in_transit)], now=100.0, margin=0.2, grace_s=60.0)) == 1


def test_the_heartbeat_reply_carries_the_suggested_move(client: TestClient) -> None:
    first, second = FakeNode(), FakeNode()
    for node in (first, second):
        assert register(client, node, identity_block(0, 15)).status_code == 200
    context = client.app.state.tracker  # type: ignore[attr-defined]
    rebalancer = client.app.state.routing.rebalancer  # type: ignore[attr-defined]
    for node in (first, second):
        assert beat(client, node, open_sessions=0).status_code == 200
    moves = rebalancer._pass()
    assert len(moves) == 1
    (mover_id,) = moves
    mover = first if first.node_id == mover_id else second
    other = second if mover is first else first
    data = beat(client, mover, open_sessions=0).json()
    assert data["suggested_layers"] == [15, 30]
    assert "closes 15 uncovered layer(s)" in data["suggestion"]
    assert data["suggestion_urgent"] is True
    quiet = beat(client, other, open_sessions=0).json()
    assert quiet["suggested_layers"] is None and quiet["suggestion"] == ""
    assert quiet["suggestion_urgent"] is False
    assert context.rebalance.suggestion_for(mover_id) is not None


def test_a_suggested_range_holds_through_a_long_load_and_then_lapses() -> None:
    # A 12-layer shard of a 70B model loads, runs the doctor and the gate in minutes:
    # its range must stay reserved until the node registers, or the next newcomer
    # is sent to the same layers.
    now = [0.0]
    pending = PendingPlacements(clock=lambda: now[0])
    model = ("m", "r")
    pending.add(model, "a", Placement(0, 12, 10.0))
    now[0] = 200.0
    assert pending.live(model, set()) == [Placement(0, 12, 10.0)]
    assert pending.live(model, {"a"}) == []  # registered: the registry counts it now
    pending.add(model, "b", Placement(12, 24, 10.0))
    now[0] = 200.0 + PENDING_TTL_S + 1.0
    assert pending.live(model, set()) == []


def test_a_busy_minute_of_newcomers_is_all_remembered() -> None:
    # 10,000 nodes with half-hour lives: ~5 newcomers a second, each loading for minutes.
    pending = PendingPlacements(clock=lambda: 0.0)
    for index in range(1500):
        pending.add(("m", "r"), f"n{index}", Placement(0, 3, 1.0))
    assert len(pending.live(("m", "r"), set())) == 1500
