"""A node without --layers: the tracker's range and sentence, the local fallback, moves."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.doctor.hardware import footprint_from_shapes, tensor_shapes
from core.doctor.placement_advice import (
    Capacity,
    choose_layers,
    max_layers_anywhere,
    measure_capacity,
    should_move,
)
from core.errors import MeshnetError, TrackerUnreachable
from core.events import Gate, GateState, NodeState
from core.node import Node
from core.runtime.config import ModelConfig
from tests.core.node.doubles import FakeTracker, make_node, node_threads
from tests.support.waiting import wait_until


def _placement_events(events: list) -> list:
    return [e for e in events if e.gate is Gate.PLACEMENT]


def test_a_node_without_layers_serves_the_trackers_range_and_publishes_its_sentence(
    tiny_model_dir: Path,
) -> None:
    tracker = FakeTracker()
    sentence = "Layers 2–4 of tiny have no server right now: serving them closes the last hole."
    tracker.allocation = {"fits": True, "start": 2, "end": 4, "sentence": sentence}
    node, events = make_node(tiny_model_dir, tracker, layers=None)
    node.start()
    try:
        assert tracker.registered[0]["identity"]["shard_start"] == 2
        assert tracker.registered[0]["identity"]["shard_end"] == 4
        (ask,) = tracker.allocation_asks
        assert ask["layer_count"] == "4" and int(ask["max_layers"]) >= 2
        assert ask["node_id"] == node.identity.node_id
        (placed,) = _placement_events(events)
        assert placed.gate_state is GateState.PASSED and placed.message == sentence
        assert placed.data == {"layers": [2, 4], "source": "tracker"}
        assert node.placement.layers == (2, 4)
    finally:
        node.stop()
    assert node_threads() == []


def test_a_tracker_that_cannot_answer_leaves_the_local_fit_and_says_so(
    tiny_model_dir: Path,
) -> None:
    tracker = FakeTracker()  # answers 404: an older tracker without the endpoint
    node, events = make_node(tiny_model_dir, tracker, layers=None)
    node.start()
    try:
        (placed,) = _placement_events(events)
        assert placed.gate_state is GateState.INFO and placed.reason == "tracker-fallback"
        assert placed.message.startswith("The tracker could not suggest a range")
        assert "the largest range that fits in this computer's memory" in placed.message
        assert tracker.registered[0]["identity"]["shard_start"] == 0
        assert tracker.registered[0]["identity"]["shard_end"] == 4
    finally:
        node.stop()


class _FlakyTracker:
    """Unreachable for the first ``failures`` asks, then answers layers 24-30."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.asks = 0

    def allocation(self, **_kwargs: object) -> dict[str, object]:
        self.asks += 1
        if self.asks <= self.failures:
            raise TrackerUnreachable("timed out")
        return {"fits": True, "start": 24, "end": 30, "sentence": "closes the hole"}


CAPACITY = Capacity("m", 30, 30, "llama-fp32", (0, 30), 10.0)


def test_a_tracker_that_misses_a_request_is_asked_again_before_the_local_fit() -> None:
    """Falling back at once piles every unlucky newcomer onto layer 0 (seen on a loaded CI)."""
    naps: list[float] = []
    tracker = _FlakyTracker(failures=2)
    choice = choose_layers(tracker, CAPACITY, "n", sleep=naps.append)  # type: ignore[arg-type]
    assert (choice.layers, choice.source) == ((24, 30), "tracker")
    assert tracker.asks == 3 and naps == [1.0, 2.0]
    gone = _FlakyTracker(failures=99)
    local = choose_layers(gone, CAPACITY, "n", sleep=naps.append)  # type: ignore[arg-type]
    assert local.source == "local" and local.layers == (0, 30)
    assert gone.asks == 4 and "timed out" in local.sentence


def test_a_node_with_too_little_memory_is_told_so_and_never_registers(
    tiny_model_dir: Path,
) -> None:
    tracker = FakeTracker()
    tracker.allocation = {
        "fits": False,
        "start": None,
        "end": None,
        "reason": "too-little-memory",
        "sentence": "This computer has room for no layer of tiny: close other programs.",
    }
    node, events = make_node(tiny_model_dir, tracker, layers=None)
    with pytest.raises(MeshnetError) as caught:
        node.start()
    assert caught.value.reason == "too-little-memory"
    assert node.state is NodeState.ERROR and tracker.registered == []
    (placed,) = _placement_events(events)
    assert placed.gate_state is GateState.FAILED and "room for no layer" in placed.message


def test_the_room_counted_fits_the_range_at_either_end(tiny_model_dir: Path) -> None:
    config = ModelConfig.from_folder(tiny_model_dir)
    footprint = footprint_from_shapes(
        tensor_shapes(tiny_model_dir),
        layer_count=config.num_layers,
        num_kv_heads=config.num_kv_heads,
        head_dim=config.head_dim,
        compute_itemsize=4,
        kv_itemsize=4,
    )
    free = footprint.needed_bytes(0, 2)  # the first two layers with the embedding, exactly
    k = max_layers_anywhere(footprint, free)
    assert 1 <= k <= 2
    assert footprint.needed_bytes(4 - k, 4) <= free and footprint.needed_bytes(0, k) <= free
    assert max_layers_anywhere(footprint, 1024) == 0
    capacity = measure_capacity(str(tiny_model_dir), "cpu", memory_cap_bytes=1024)
    assert capacity.max_layers == 0 and capacity.local is None and capacity.layer_count == 4


@pytest.mark.parametrize(
    ("kwargs", "moves"),
    [
        ({}, True),
        ({"open_sessions": 1}, False),
        ({"pinned": True}, False),
        ({"serving_for_s": 5.0}, False),
    ],
    ids=["idle", "open-session", "pinned", "within-dwell"],
)
def test_a_node_moves_only_idle_unpinned_and_past_its_dwell_time(
    kwargs: dict[str, object], moves: bool
) -> None:
    args: dict[str, object] = {
        "pinned": False,
        "open_sessions": 0,
        "serving_for_s": 700.0,
        "dwell_s": 600.0,
    }
    args.update(kwargs)
    decided, why = should_move((2, 4), (0, 2), **args)  # type: ignore[arg-type]
    assert decided is moves and why


def test_an_urgent_move_waits_only_the_short_dwell(tiny_model_dir: Path) -> None:
    """A move that closes a hole cannot wait ten minutes: the model serves no one meanwhile."""
    tracker = FakeTracker()
    tracker.allocation = {"fits": True, "start": 0, "end": 2, "sentence": "first half"}
    node, _events = make_node(
        tiny_model_dir, tracker, layers=None, move_dwell_s=600.0, move_dwell_urgent_s=0.0
    )
    node.start()
    try:
        assert not node.suggest_move((2, 4), "a better spread")  # inside the long dwell
        tracker.view = {
            "suggested_layers": [2, 4],
            "suggestion": "Moving to layers 2–4 closes 2 uncovered layer(s).",
            "suggestion_urgent": True,
        }
        wait_until(lambda: len(tracker.registered) >= 2 and node.state is NodeState.SERVING)
        assert node.placement.layers == (2, 4)
        assert tracker.registered[1]["identity"]["shard_start"] == 2
    finally:
        node.stop()


def test_a_suggested_move_reloads_reproves_and_re_registers_on_the_new_range(
    tiny_model_dir: Path,
) -> None:
    tracker = FakeTracker()
    tracker.allocation = {"fits": True, "start": 0, "end": 2, "sentence": "first"}
    node, events = make_node(tiny_model_dir, tracker, layers=None, move_dwell_s=0.0)
    node.start()
    try:
        tracker.view = {"suggested_layers": [2, 4], "suggestion": "Moving to layers 2–4 closes."}
        wait_until(lambda: len(tracker.registered) >= 2 and node.state is NodeState.SERVING)
        assert tracker.registered[1]["identity"]["shard_start"] == 2
        assert node.placement.layers == (2, 4)
        # A second full doctor run and gate: two capability reports, two admissions.
        assert sum(1 for e in events if e.gate is Gate.ADMISSION) >= 2
        assert tracker.count("/deregister") >= 1
        moved = [e for e in _placement_events(events) if e.reason == "rebalance"]
        assert moved and moved[0].message == "Moving to layers 2–4 closes."
        tracker.view = {"suggested_layers": [2, 4]}  # already there: no further move
        registered = len(tracker.registered)
        wait_until(lambda: tracker.count("/heartbeat") >= 5)
        assert len(tracker.registered) == registered
    finally:
        node.stop()
    assert node_threads() == []


def test_a_node_started_with_layers_never_moves(tiny_model_dir: Path) -> None:
    tracker = FakeTracker()
    tracker.view = {"suggested_layers": [2, 4], "suggestion": "move"}
    node, _events = make_node(tiny_model_dir, tracker, layers=(0, 2), move_dwell_s=0.0)
    node.start()
    try:
        wait_until(lambda: tracker.count("/heartbeat") >= 5)
        assert len(tracker.registered) == 1 and node.placement.layers == (0, 2)
        assert tracker.allocation_asks == []
    finally:
        node.stop()


def test_a_node_with_an_open_session_is_never_moved(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tracker = FakeTracker()
    tracker.allocation = {"fits": True, "start": 0, "end": 2, "sentence": "first"}
    node, _events = make_node(tiny_model_dir, tracker, layers=None, move_dwell_s=0.0)
    node.start()
    try:
        monkeypatch.setattr(Node, "open_sessions", property(lambda _self: 1))
        tracker.view = {"suggested_layers": [2, 4], "suggestion": "move"}
        wait_until(lambda: tracker.count("/heartbeat") >= 8)
        assert not node.placement.relocate((2, 4), "asked directly")
        assert len(tracker.registered) == 1 and node.placement.layers == (0, 2)
        assert node.state is NodeState.SERVING
    finally:
        monkeypatch.undo()
        node.stop()
