"""The node lifecycle: gates in order, fail-closed before registering, re-registration."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import torch

from core.doctor.admission_gate import REASON_STALE, CapabilityContext
from core.doctor.capability import CapabilityReport
from core.doctor.checkup import DoctorOutcome, DoctorRequest, run_doctor
from core.errors import CapabilityAdmissionError, MeshnetError
from core.events import Gate, GateState, NodeState
from core.runtime.shard import Shard
from tests.core.node.doubles import FakeTracker, make_node, node_threads
from tests.support.waiting import wait_until


def test_refused_node_never_calls_the_tracker(tiny_model_dir: Path) -> None:
    def stale(context: CapabilityContext) -> CapabilityReport:
        from core.doctor.admission_gate import probe_capability

        report = probe_capability(context)  # a real forward, but an old timestamp
        return dataclasses.replace(report, validated_at=time.time() - 3600)

    tracker = FakeTracker()
    node, events = make_node(tiny_model_dir, tracker, validator=stale)
    with pytest.raises(CapabilityAdmissionError) as caught:
        node.start()
    assert caught.value.reason == REASON_STALE
    assert tracker.calls == []
    assert node.state is NodeState.REFUSED
    failed = [e for e in events if e.gate is Gate.ADMISSION and e.gate_state is GateState.FAILED]
    assert failed and failed[0].reason == REASON_STALE and "re-run" in failed[0].message
    assert events[-1].state is NodeState.REFUSED and events[-1].reason == REASON_STALE
    assert node_threads() == []


def test_gates_pass_in_order_then_serving_and_drain(tiny_model_dir: Path) -> None:
    tracker = FakeTracker()
    node, events = make_node(tiny_model_dir, tracker)
    node.start()
    try:
        wait_until(lambda: tracker.count("/heartbeat") >= 1)
        passed = [e.gate for e in events if e.gate_state is GateState.PASSED]
        assert passed[:5] == [
            Gate.IDENTITY,
            Gate.CAPABILITY,
            Gate.ADMISSION,
            Gate.DATA_PLANE,
            Gate.REGISTRATION,
        ]
        states = [e.state for e in events if e.kind == "state"]
        assert states[:6] == [
            NodeState.LOADING,
            NodeState.PROBING,
            NodeState.ADMITTING,
            NodeState.STARTING,
            NodeState.REGISTERING,
            NodeState.SERVING,
        ]
        assert node.state is NodeState.SERVING
        assert node.endpoint.startswith("wss://127.0.0.1:")  # TLS by default
        assert tracker.calls.index("/api/v1/nodes/register") == 0
        # The class of the device the shard runs on, for the tracker's device check.
        assert tracker.registered[0]["device_class"] == "cpu"
    finally:
        node.stop()
    assert tracker.calls[-1].endswith("/deregister")
    assert node.state is NodeState.STOPPED
    assert node_threads() == []


def test_progress_events_cover_load_and_probe_in_one_shape(tiny_model_dir: Path) -> None:
    tracker = FakeTracker()
    node, events = make_node(tiny_model_dir, tracker)
    node.start()
    node.stop()
    progress = [e for e in events if e.kind == "progress"]
    stages = [e.data["stage"] for e in progress]
    assert stages[0] == "load" and stages[-1] == "probe"
    assert all(set(e.data) == {"stage", "done", "total"} for e in progress)
    load = [e.data for e in progress if e.data["stage"] == "load"]
    assert load[-1] == {"stage": "load", "done": 2, "total": 2}
    probe = [e.data for e in progress if e.data["stage"] == "probe"]
    assert probe[-1]["done"] == probe[-1]["total"] > 3
    assert "Loading layers 0–2" in progress[0].message


def test_refused_heartbeat_with_a_fresh_report_resends_it(tiny_model_dir: Path) -> None:
    tracker = FakeTracker(heartbeat_answers=[410])
    node, events = make_node(tiny_model_dir, tracker)
    node.start()
    try:
        wait_until(lambda: tracker.count("/register") >= 2)
        wait_until(lambda: node.state is NodeState.SERVING)
    finally:
        node.stop()
    assert any(e.state is NodeState.REGISTERING and e.reason == "re-register" for e in events)
    first, second = tracker.registered[:2]
    assert first["capability"]["validated_at"] == second["capability"]["validated_at"]
    assert sum(1 for e in events if e.gate is Gate.CAPABILITY) == 1


def test_a_report_past_half_its_limit_is_proven_again_and_registered_while_serving(
    tiny_model_dir: Path,
) -> None:
    tracker = FakeTracker()
    node, events = make_node(tiny_model_dir, tracker, report_max_age_s=0.5)
    node.start()
    try:
        started_report = tracker.registered[0]["capability"]
        # No refused heartbeat is needed: the serving loop proves again by itself.
        wait_until(lambda: tracker.count("/register") >= 2)
    finally:
        node.stop()
    again = tracker.registered[1]["capability"]
    assert again["passed"] is True
    assert again["validated_at"] > started_report["validated_at"]
    capability = [e for e in events if e.gate is Gate.CAPABILITY]
    assert len(capability) >= 2 and capability[1].data["report"] == again
    assert any(e.kind == "progress" and e.data["stage"] == "probe" for e in events[-40:])
    serving_from = next(i for i, e in enumerate(events) if e.state is NodeState.SERVING)
    later = [e.state for e in events[serving_from:] if e.kind == "state"]
    assert later[: later.index(NodeState.DRAINING)] == [NodeState.SERVING]  # serving throughout


def test_heartbeat_reply_tells_reachability_and_recipe_without_fetching_state(
    tiny_model_dir: Path,
) -> None:
    tracker = FakeTracker()
    tracker.view = {
        "reachability": "reachable",
        "reachability_reason": "dialled back in 3 ms",
        "recipe_status": "certified",
        "recipe_detail": "certified by route session r1",
    }
    node, events = make_node(tiny_model_dir, tracker)
    node.start()
    try:
        wait_until(lambda: any(e.gate is Gate.REACHABILITY for e in events))
        wait_until(lambda: any(e.gate is Gate.SESSIONS for e in events))
    finally:
        node.stop()
    reach = next(e for e in events if e.gate is Gate.REACHABILITY)
    assert reach.gate_state is GateState.PASSED and reach.data == {"reachability": "reachable"}
    assert reach.message == "dialled back in 3 ms"
    recipe = [e for e in events if e.gate is Gate.RECIPE]
    assert recipe[0].data == {"status": "dark", "detail": "registered"}  # from registration
    assert recipe[-1].gate_state is GateState.PASSED
    assert recipe[-1].data == {"status": "certified", "detail": "certified by route session r1"}
    sessions = next(e for e in events if e.gate is Gate.SESSIONS)
    assert sessions.data == {"open_sessions": 0, "tokens_served": 0}
    assert "/api/v1/state" not in tracker.calls
    # Unchanged answers publish nothing new.
    assert sum(1 for e in events if e.gate is Gate.REACHABILITY) == 1


def test_stats_events_while_serving(tiny_model_dir: Path) -> None:
    tracker = FakeTracker()
    node, events = make_node(tiny_model_dir, tracker, stats_interval_s=0.05)
    node.start()
    try:
        wait_until(lambda: any(e.kind == "stats" for e in events))
    finally:
        node.stop()
    stats = next(e for e in events if e.kind == "stats")
    assert set(stats.data) == {"open_sessions", "tokens_served", "uptime_s"}


def test_layers_past_the_model_are_refused_as_bad_layers(tiny_model_dir: Path) -> None:
    def doctor(request: DoctorRequest, **kwargs: Any) -> DoctorOutcome:
        return run_doctor(dataclasses.replace(request, layers=(2, 9), save=False), **kwargs)

    tracker = FakeTracker()
    node, events = make_node(tiny_model_dir, tracker, doctor=doctor)
    with pytest.raises(CapabilityAdmissionError) as caught:
        node.start()
    assert caught.value.reason == "bad-layers"
    assert "This model has 4 layers" in caught.value.message
    assert tracker.calls == []
    assert events[-1].state is NodeState.REFUSED and events[-1].reason == "bad-layers"


@pytest.mark.parametrize("error", [torch.OutOfMemoryError("CUDA out of memory"), MemoryError()])
def test_out_of_memory_while_loading_is_refused_with_a_sentence(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch, error: BaseException
) -> None:
    def no_memory(*_args: object, **_kwargs: object) -> Shard:
        raise error

    monkeypatch.setattr(Shard, "load", no_memory)
    tracker = FakeTracker()
    node, events = make_node(tiny_model_dir, tracker)
    with pytest.raises(CapabilityAdmissionError) as caught:
        node.start()
    assert caught.value.reason == "out-of-memory"
    sentence = "Not enough memory for layers 0–2: choose fewer layers or raise the memory cap."
    assert caught.value.message == sentence
    assert (events[-1].state, events[-1].reason, events[-1].message) == (
        NodeState.REFUSED,
        "out-of-memory",
        sentence,
    )
    assert tracker.calls == []


def test_an_unexpected_failure_is_an_error_state_with_a_sentence(tiny_model_dir: Path) -> None:
    def broken(_request: DoctorRequest, **_kwargs: Any) -> DoctorOutcome:
        raise KeyError("boom")

    node, events = make_node(tiny_model_dir, FakeTracker(), doctor=broken)
    with pytest.raises(MeshnetError) as caught:
        node.start()
    assert caught.value.reason == "internal-error"
    assert events[-1].state is NodeState.ERROR and events[-1].reason == "internal-error"
    assert "internal error" in events[-1].message


def test_events_serialise_for_the_cli(tiny_model_dir: Path) -> None:
    tracker = FakeTracker()
    node, events = make_node(tiny_model_dir, tracker)
    node.start()
    node.stop()
    capability = next(e for e in events if e.gate is Gate.CAPABILITY)
    assert capability.data["report"]["passed"] is True
    line = json.loads(json.dumps(capability.to_dict()))
    assert set(line) == {"kind", "message", "state", "gate", "gate_state", "reason", "data", "at"}
    assert line["data"]["report"]["passed"] is True and line["gate"] == "capability"


def test_snapshot_holds_every_gate_the_registration_and_the_settings(
    tiny_model_dir: Path,
) -> None:
    tracker = FakeTracker()
    node, _events = make_node(tiny_model_dir, tracker, memory_cap_mb=4096)
    before = node.snapshot_event().data
    assert before["state"] == "stopped" and before["gates"] == {} and before["report"] is None
    node.start()
    try:
        snapshot = node.snapshot_event()
        data = snapshot.data
        assert snapshot.kind == "snapshot" and data["state"] == "serving"
        assert list(data["gates"])[:5] == [
            "identity",
            "capability",
            "admission",
            "data-plane",
            "registration",
        ]
        assert data["gates"]["capability"]["gate_state"] == "passed"
        assert data["report"]["shard"] == {"start": 0, "end": 2}
        registration = data["registration"]
        assert set(registration) == {
            "node_id",
            "tracker_url",
            "endpoint",
            "model_id",
            "shard",
            "recipe_id",
            "recipe_version",
            "model_artifact_digest",
            "runtime_recipe_digest",
        }
        assert registration["shard"] == [0, 2] and registration["model_id"] == "tiny-llama"
        assert data["started_at"] is not None and data["uptime_s"] >= 0
        assert data["settings"] == {
            "tracker_url": "http://tracker.test",
            "model": str(tiny_model_dir),
            "layers": [0, 2],
            "device": None,
            "memory_cap_mb": 4096,
        }
        assert isinstance(data["pid"], int)
        json.dumps(snapshot.to_dict())
    finally:
        node.stop()
    after = node.snapshot_event().data
    assert after["state"] == "stopped" and after["registration"] is None
    assert after["started_at"] is None


def test_an_unreachable_tracker_is_an_error_state_and_nothing_keeps_running(
    tiny_model_dir: Path,
) -> None:
    import httpx

    from core.identity.keypair import NodeIdentity
    from core.node import Node, NodeSettings

    def unreachable(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    settings = NodeSettings(
        tracker_url="http://tracker.test", model=str(tiny_model_dir), layers=(0, 2)
    )
    node = Node(
        settings,
        NodeIdentity.from_seed(bytes([3]) * 32),
        transport=httpx.MockTransport(unreachable),
    )
    events: list[Any] = []
    node.bus.subscribe(events.append)
    with pytest.raises(MeshnetError) as caught:
        node.start()
    assert caught.value.reason == "tracker-unreachable"
    assert events[-1].state is NodeState.ERROR and events[-1].reason == "tracker-unreachable"
    assert "Check the tracker URL" in events[-1].message
    assert "keeps retrying" not in events[-1].message  # it exits: a start-up is not retried
    assert node.endpoint == "" and node_threads() == []


def test_a_refused_heartbeat_is_logged_with_the_trackers_reason(
    tiny_model_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tracker = FakeTracker()
    node, _events = make_node(tiny_model_dir, tracker)
    node.start()
    try:
        with caplog.at_level("WARNING", logger="core.node.serving"):
            tracker.heartbeat_refusal = (429, "auth-throttled", "failed authentication 60 times")
            wait_until(lambda: "heartbeat refused" in caplog.text)
            tracker.heartbeat_refusal = None
    finally:
        node.stop()
    # The operator reads why, not only that: the bare "heartbeat refused" hid it.
    assert "auth-throttled" in caplog.text and "failed authentication 60 times" in caplog.text


def _other_bytes(report: CapabilityReport) -> CapabilityReport:
    return dataclasses.replace(
        report, model=dataclasses.replace(report.model, content_digest="0" * 64)
    )


def _other_recipe_digest(report: CapabilityReport) -> CapabilityReport:
    return dataclasses.replace(
        report, recipe=dataclasses.replace(report.recipe, runtime_recipe_digest="f" * 64)
    )


def _no_recipe_digest(report: CapabilityReport) -> CapabilityReport:
    return dataclasses.replace(
        report, recipe=dataclasses.replace(report.recipe, runtime_recipe_digest="")
    )


def _other_shard(report: CapabilityReport) -> CapabilityReport:
    return dataclasses.replace(report, shard=dataclasses.replace(report.shard, end=1))


@pytest.mark.parametrize(
    ("perturb", "reason"),
    [
        (_other_bytes, "model-mismatch"),
        (_other_recipe_digest, "recipe-mismatch"),
        (_no_recipe_digest, "recipe-mismatch"),
        (_other_shard, "shard-mismatch"),
    ],
)
def test_requirement_comes_from_what_is_advertised_so_a_mismatched_report_is_refused(
    tiny_model_dir: Path, perturb: Any, reason: str
) -> None:
    def validator(context: CapabilityContext) -> CapabilityReport:
        from core.doctor.admission_gate import probe_capability

        return perturb(probe_capability(context))

    tracker = FakeTracker()
    node, _events = make_node(tiny_model_dir, tracker, validator=validator)
    with pytest.raises(CapabilityAdmissionError) as caught:
        node.start()
    assert caught.value.reason == reason
    assert tracker.calls == []


def test_a_quarantined_node_is_told_why_and_shows_refused(tiny_model_dir: Path) -> None:
    tracker = FakeTracker()
    node, events = make_node(tiny_model_dir, tracker)
    node.start()
    try:
        wait_until(lambda: tracker.count("/heartbeat") >= 1)
        why = "the node is quarantined: a hop audit found this node's output for layers 0-2 wrong"
        tracker.heartbeat_refusal = (403, "quarantined", why)
        wait_until(lambda: node.state is NodeState.REFUSED)
        told = [e for e in events if e.kind == "state" and e.state is NodeState.REFUSED]
        assert told[-1].reason == "quarantined" and "hop audit" in told[-1].message
    finally:
        node.stop()


def test_a_node_without_a_configured_kv_budget_still_has_one(tiny_model_dir: Path) -> None:
    tracker = FakeTracker()
    node, _ = make_node(tiny_model_dir, tracker)
    assert node.settings.kv_budget_bytes is None
    node.start()
    try:
        wait_until(lambda: tracker.count("/heartbeat") >= 1)
        sessions = node._plane.sessions
        assert sessions is not None and sessions.kv_budget_bytes is not None
        assert sessions.kv_budget_bytes > 0
    finally:
        node.stop()


def test_a_tracker_lost_while_serving_is_reconnecting_and_says_it_retries(
    tiny_model_dir: Path,
) -> None:
    import httpx

    tracker = FakeTracker()
    lost = threading.Event()

    def answer(request: httpx.Request) -> httpx.Response:
        if lost.is_set() and request.url.path.endswith("/heartbeat"):
            raise httpx.ConnectError("connection refused", request=request)
        return tracker(request)

    node, events = make_node(tiny_model_dir, answer)  # type: ignore[arg-type]
    node.start()
    try:
        lost.set()
        wait_until(lambda: node.state is NodeState.RECONNECTING)
        lost.clear()
        wait_until(lambda: node.state is NodeState.SERVING)
    finally:
        node.stop()
    reconnecting = [e for e in events if e.state is NodeState.RECONNECTING]
    assert reconnecting[0].reason == "tracker-unreachable"
    assert reconnecting[0].message.endswith("The node keeps retrying.")
