"""Stopping during any step of start-up, pausing, resuming, and reusing a saved report.

A stop asked while the node loads, probes, is admitted or registers must leave
nothing registered and no thread running, and the node must be able to start
again; pause leaves routing and frees the shard, resume proves it afresh.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import threading
import time
import weakref
from pathlib import Path
from typing import Any

import pytest

from core.doctor.admission_gate import CapabilityContext, probe_capability
from core.doctor.capability import CapabilityReport
from core.doctor.checkup import DoctorOutcome, DoctorRequest, run_doctor
from core.errors import Cancelled, CapabilityAdmissionError
from core.events import Gate, NodeEvent, NodeState
from core.node import Node
from core.progress import Progress
from tests.core.node.doubles import FakeTracker, make_node, node_threads, stop_from_another_thread
from tests.support.waiting import wait_until


def _stop_on(node: Node, matches: Any, stoppers: list[threading.Thread]) -> None:
    """Stop the node (from another thread) when an event matching ``matches`` is published."""

    def on_event(event: NodeEvent) -> None:
        if not stoppers and matches(event):
            stoppers.append(stop_from_another_thread(node))

    node.bus.subscribe(on_event, replay=False)


def _assert_stopped_cleanly(node: Node, tracker: FakeTracker, stopper: threading.Thread) -> None:
    stopper.join(30)
    assert not stopper.is_alive()
    assert node.state is NodeState.STOPPED
    assert node.registration is None and node.endpoint == ""
    assert node_threads() == []
    # Whatever registered was deregistered again: the tracker lists nothing.
    assert tracker.count("/register") == tracker.count("/deregister")


def _start_cancelled(node: Node) -> None:
    with pytest.raises(Cancelled):
        node.start()


def _restart_serves(node: Node, tracker: FakeTracker) -> None:
    node.start()
    try:
        assert node.state is NodeState.SERVING
        wait_until(lambda: tracker.count("/heartbeat") >= 1)
    finally:
        node.stop()
    assert node.state is NodeState.STOPPED and node_threads() == []


@pytest.mark.parametrize("stage", ["load", "probe"])
def test_stop_while_the_doctor_runs_stops_at_the_next_step(
    tiny_model_dir: Path, stage: str
) -> None:
    tracker = FakeTracker()
    node, events = make_node(tiny_model_dir, tracker)
    stoppers: list[threading.Thread] = []
    _stop_on(node, lambda e: e.kind == "progress" and e.data["stage"] == stage, stoppers)
    _start_cancelled(node)
    _assert_stopped_cleanly(node, tracker, stoppers[0])
    assert tracker.calls == []
    done = [e.data for e in events if e.kind == "progress" and e.data["stage"] == stage]
    assert done[-1]["done"] < done[-1]["total"]  # it stopped before finishing the step
    assert not any(e.gate is Gate.CAPABILITY for e in events)
    _restart_serves(node, tracker)


def test_stop_during_admission_starts_no_data_plane(tiny_model_dir: Path) -> None:
    tracker = FakeTracker()
    stoppers: list[threading.Thread] = []
    node_box: list[Node] = []

    def validator(context: CapabilityContext) -> CapabilityReport:
        if not stoppers:
            stoppers.append(stop_from_another_thread(node_box[0]))
        return probe_capability(context)

    node, events = make_node(tiny_model_dir, tracker, validator=validator)
    node_box.append(node)
    _start_cancelled(node)
    _assert_stopped_cleanly(node, tracker, stoppers[0])
    assert tracker.calls == []
    assert not any(e.gate is Gate.DATA_PLANE for e in events)
    _restart_serves(node, tracker)


def test_registration_that_completes_after_stop_is_deregistered(tiny_model_dir: Path) -> None:
    tracker = FakeTracker()
    node, _events = make_node(tiny_model_dir, tracker)
    stoppers: list[threading.Thread] = []

    def stop_while_registering() -> None:
        if not stoppers:
            stoppers.append(stop_from_another_thread(node))

    tracker.on_register = stop_while_registering
    _start_cancelled(node)
    _assert_stopped_cleanly(node, tracker, stoppers[0])
    assert tracker.calls == [
        "/api/v1/nodes/register",
        f"/api/v1/nodes/{node.identity.node_id}/deregister",
    ]
    tracker.on_register = None
    _restart_serves(node, tracker)


def test_pause_leaves_routing_frees_the_shard_and_resume_proves_it_again(
    tiny_model_dir: Path,
) -> None:
    tracker = FakeTracker()
    doctor_runs: list[DoctorRequest] = []
    loaded: list[weakref.ref[Any]] = []

    def doctor(request: DoctorRequest, **kwargs: Any) -> DoctorOutcome:
        doctor_runs.append(request)
        outcome = run_doctor(request, **kwargs)
        loaded.append(weakref.ref(outcome.shard))
        return outcome

    node, events = make_node(tiny_model_dir, tracker, doctor=doctor)
    node.start()
    first_report = tracker.registered[0]["capability"]
    node.pause("Paused: a game is running")
    assert node.state is NodeState.PAUSED
    assert events[-1].message == "Paused: a game is running"
    assert [e.state for e in events if e.kind == "state"][-2:] == [
        NodeState.PAUSING,
        NodeState.PAUSED,
    ]
    assert tracker.calls[-1].endswith("/deregister")
    assert node_threads() == [] and node.endpoint == "" and node.registration is None
    gc.collect()
    assert loaded[0]() is None  # nobody holds the shard any more: its memory is free
    beats = tracker.count("/heartbeat")
    time.sleep(0.2)
    assert tracker.count("/heartbeat") == beats  # a paused node sends no heartbeat

    node.resume()
    try:
        assert node.state is NodeState.SERVING
        assert len(doctor_runs) == 2  # a fresh load and test forward
        second_report = tracker.registered[1]["capability"]
        assert second_report["validated_at"] > first_report["validated_at"]
        wait_until(lambda: tracker.count("/heartbeat") > beats)
    finally:
        node.stop()
    assert node.state is NodeState.STOPPED and node_threads() == []


def test_pause_during_start_up_ends_paused_with_nothing_registered(tiny_model_dir: Path) -> None:
    tracker = FakeTracker()
    node, _events = make_node(tiny_model_dir, tracker)
    pausers: list[threading.Thread] = []

    def on_event(event: NodeEvent) -> None:
        if not pausers and event.kind == "progress" and event.data["stage"] == "probe":
            pauser = threading.Thread(target=node.pause)
            pauser.start()
            wait_until(lambda: node._cancel.cancelled or not pauser.is_alive())
            pausers.append(pauser)

    node.bus.subscribe(on_event, replay=False)
    _start_cancelled(node)
    pausers[0].join(30)
    assert node.state is NodeState.PAUSED
    assert tracker.calls == [] and node_threads() == []
    node.resume()
    node.stop()
    assert tracker.count("/register") == tracker.count("/deregister") == 1


def test_stop_of_a_paused_node_is_stopped(tiny_model_dir: Path) -> None:
    tracker = FakeTracker()
    node, events = make_node(tiny_model_dir, tracker)
    node.start()
    node.pause()
    node.stop()
    assert node.state is NodeState.STOPPED and events[-1].state is NodeState.STOPPED
    assert tracker.count("/deregister") == 1


# -- run --report: reuse the wizard's fresh report -----------------------------------------


def _saved_report(model: Path, layers: tuple[int, int], **changes: Any) -> Path:
    outcome = run_doctor(DoctorRequest(model=str(model), layers=layers))
    assert outcome.report_path is not None and outcome.report.passed
    outcome.release()
    if changes:
        report = dataclasses.replace(outcome.report, **changes)
        outcome.report_path.write_text(json.dumps(report.to_dict()))
    return outcome.report_path


def test_a_fresh_saved_report_is_reused_without_a_second_test_forward(
    tiny_model_dir: Path,
) -> None:
    path = _saved_report(tiny_model_dir, (0, 2))
    saved = json.loads(path.read_text())
    tracker = FakeTracker()
    node, events = make_node(tiny_model_dir, tracker, layers=None, report_path=path)  # type: ignore[arg-type]
    node.start()
    try:
        assert node.state is NodeState.SERVING
        assert tracker.registered[0]["capability"] == saved
        assert not any(e.kind == "progress" and e.data["stage"] == "probe" for e in events)
        capability = next(e for e in events if e.gate is Gate.CAPABILITY)
        assert capability.data["report"] == saved
    finally:
        node.stop()
    node.start()  # a second start (as resume) proves afresh instead of reusing the file
    try:
        assert any(e.kind == "progress" and e.data["stage"] == "probe" for e in events)
        assert tracker.registered[1]["capability"]["validated_at"] > saved["validated_at"]
    finally:
        node.stop()


@pytest.mark.parametrize(
    ("layers", "changes", "reason"),
    [
        ((0, 2), {"validated_at": time.time() - 3600}, "stale"),
        ((1, 3), {}, "shard-mismatch"),
        ((0, 2), {"status": "failed", "diagnostics": ("it failed",)}, "not-passed"),
    ],
)
def test_a_stale_or_mismatching_saved_report_is_refused_with_the_gates_reason(
    tiny_model_dir: Path, layers: tuple[int, int], changes: dict[str, Any], reason: str
) -> None:
    path = _saved_report(tiny_model_dir, (0, 2), **changes)
    tracker = FakeTracker()
    node, events = make_node(tiny_model_dir, tracker, layers=layers, report_path=path)
    with pytest.raises(CapabilityAdmissionError) as caught:
        node.start()
    assert caught.value.reason == reason
    assert events[-1].state is NodeState.REFUSED and events[-1].reason == reason
    assert tracker.calls == [] and node_threads() == []


def test_an_unreadable_saved_report_is_refused(tiny_model_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text("{not json")
    node, events = make_node(tiny_model_dir, FakeTracker(), report_path=path)
    with pytest.raises(CapabilityAdmissionError):
        node.start()
    assert events[-1].state is NodeState.REFUSED and events[-1].reason == "no-report"


def test_progress_callback_cancel_is_not_a_verdict(tiny_model_dir: Path) -> None:
    calls: list[Progress] = []

    def cancel_on_probe(progress: Progress) -> None:
        calls.append(progress)
        if progress.stage == "probe" and progress.done == 2:
            raise Cancelled("stop")

    with pytest.raises(Cancelled):
        run_doctor(DoctorRequest(model=str(tiny_model_dir), layers=(0, 2)), cancel_on_probe)
    assert node_threads() == []
