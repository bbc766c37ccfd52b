"""The node lifecycle: gates in order, fail-closed before registering, re-registration."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import httpx
import pytest

from core.admission import REASON_STALE, CapabilityAdmissionError, CapabilityContext
from core.capability import CapabilityReport
from core.doctor import DoctorOutcome, DoctorRequest, run_doctor
from core.events import Gate, GateState, NodeEvent, NodeState
from core.identity import NodeIdentity, b64encode
from core.node import Node, NodeSettings

IDENTITY = NodeIdentity.from_seed(bytes([7]) * 32)
TRACKER_KEY = NodeIdentity.from_seed(bytes([9]) * 32)


class FakeTracker:
    """Answers the tracker API the way the real one does; records every call."""

    def __init__(self, heartbeat_answers: list[int] | None = None) -> None:
        self.calls: list[str] = []
        self._heartbeats = list(heartbeat_answers or [])

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        self.calls.append(path)
        if path.endswith("/register"):
            return httpx.Response(
                200,
                json={
                    "node_id": IDENTITY.node_id,
                    "tracker_public_key": b64encode(TRACKER_KEY.public_key_raw),
                    "heartbeat_interval_s": 0.05,
                    "recipe": {"status": "dark", "detail": "registered"},
                    "session": {"credential": {"expires_at": time.time() + 900}},
                },
            )
        if path.endswith("/heartbeat"):
            status = self._heartbeats.pop(0) if self._heartbeats else 200
            if status != 200:
                return httpx.Response(status, json={"reason": "re-register", "detail": "expired"})
            return httpx.Response(200, json={"heartbeat_interval_s": 0.05, "live_until": 1e12})
        if path.endswith("/deregister"):
            return httpx.Response(200, json={"node_id": IDENTITY.node_id})
        return httpx.Response(200, json={"nodes": [], "recipes": []})


def _node(model: Path, tracker: FakeTracker, **kwargs: object) -> tuple[Node, list[NodeEvent]]:
    settings = NodeSettings(tracker_url="http://tracker.test", model=str(model), layers=(0, 2))
    node = Node(settings, IDENTITY, transport=httpx.MockTransport(tracker), **kwargs)  # type: ignore[arg-type]
    events: list[NodeEvent] = []
    node.bus.subscribe(events.append)
    return node, events


def _wait(predicate: object, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.02)
    raise AssertionError("condition not reached")


def test_refused_node_never_calls_the_tracker(tiny_model_dir: Path) -> None:
    def stale(context: CapabilityContext) -> CapabilityReport:
        from core.admission import probe_capability

        report = probe_capability(context)  # a real forward, but an old timestamp
        return dataclasses.replace(report, validated_at=time.time() - 3600)

    tracker = FakeTracker()
    node, events = _node(tiny_model_dir, tracker, validator=stale)
    with pytest.raises(CapabilityAdmissionError) as caught:
        node.start()
    assert caught.value.reason == REASON_STALE
    assert tracker.calls == []
    assert node.state is NodeState.REFUSED
    failed = [e for e in events if e.gate is Gate.ADMISSION and e.gate_state is GateState.FAILED]
    assert failed and failed[0].reason == REASON_STALE and "re-run" in failed[0].message


def test_gates_pass_in_order_then_serving_and_drain(tiny_model_dir: Path) -> None:
    tracker = FakeTracker()
    node, events = _node(tiny_model_dir, tracker)
    node.start()
    try:
        _wait(lambda: any(c.endswith("/heartbeat") for c in tracker.calls))
        passed = [e.gate for e in events if e.gate_state is GateState.PASSED]
        assert passed[:5] == [
            Gate.IDENTITY,
            Gate.CAPABILITY,
            Gate.ADMISSION,
            Gate.DATA_PLANE,
            Gate.REGISTRATION,
        ]
        assert node.state is NodeState.SERVING
        assert node.endpoint.startswith("ws://127.0.0.1:")
        register = tracker.calls.index("/api/v1/nodes/register")
        assert register == 0  # nothing reached the tracker before admission passed
    finally:
        node.stop()
    assert tracker.calls[-1].endswith("/deregister")
    assert node.state is NodeState.STOPPED


def test_refused_heartbeat_makes_the_node_register_again(tiny_model_dir: Path) -> None:
    tracker = FakeTracker(heartbeat_answers=[410])
    node, events = _node(tiny_model_dir, tracker)
    node.start()
    try:
        _wait(lambda: tracker.calls.count("/api/v1/nodes/register") >= 2)
        _wait(lambda: node.state is NodeState.SERVING)
    finally:
        node.stop()
    assert any(e.state is NodeState.REGISTERING and e.reason == "re-register" for e in events)


def test_failed_doctor_is_refused_as_not_passed(tiny_model_dir: Path) -> None:
    def doctor(request: DoctorRequest) -> DoctorOutcome:
        # Layers past the model: the doctor aborts without loading anything.
        return run_doctor(dataclasses.replace(request, layers=(2, 9), save=False))

    tracker = FakeTracker()
    node, _events = _node(tiny_model_dir, tracker, doctor=doctor)
    with pytest.raises(CapabilityAdmissionError) as caught:
        node.start()
    assert caught.value.reason == "not-passed"
    assert tracker.calls == []


def test_events_serialise_for_the_cli(tiny_model_dir: Path) -> None:
    tracker = FakeTracker()
    node, events = _node(tiny_model_dir, tracker)
    node.start()
    node.stop()
    capability = next(e for e in events if e.gate is Gate.CAPABILITY)
    assert capability.data["report"]["passed"] is True
    json.dumps(capability.data)  # what the GUI and --events json carry
