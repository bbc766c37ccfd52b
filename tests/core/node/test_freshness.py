"""The node keeps its capability report inside the tracker's age limit.

The tracker says in its registration answer how old a report it admits; the
node proves its layers again (a real forward through the loaded shard) and
registers the fresh report before that age, while it keeps serving. A
registration refused as stale makes it prove again and register by itself,
and a registration for a relayed endpoint checks the report's age first.
"""

from __future__ import annotations

from pathlib import Path

from core.events import Gate, GateState, NodeState
from core.network.tracker_client import Registration
from tests.core.node.doubles import FakeTracker, make_node
from tests.support.waiting import wait_until

STALE = (422, "stale", "the capability report is 2 min old (limit 1 min)")


def _states_after_serving(events: list) -> list[NodeState]:  # type: ignore[type-arg]
    first = next(i for i, e in enumerate(events) if e.state is NodeState.SERVING)
    return [e.state for e in events[first:] if e.kind == "state"]


def test_the_registration_answer_carries_the_trackers_age_limit() -> None:
    from core.network.tracker_client import _positive_or_none

    assert _positive_or_none(60) == 60.0 and _positive_or_none("900") == 900.0
    assert _positive_or_none(None) is None and _positive_or_none(-1) is None
    assert _positive_or_none(float("inf")) is None and _positive_or_none("soon") is None
    assert Registration("n", "k", 1.0, "dark", "", 0.0, {}).capability_max_age_s is None


def test_the_trackers_lower_limit_binds_and_the_node_proves_again_before_it(
    tiny_model_dir: Path,
) -> None:
    tracker = FakeTracker()
    tracker.capability_max_age_s = 1.0  # far below the node's own 900 s
    node, events = make_node(tiny_model_dir, tracker)
    node.start()
    try:
        assert node.report_max_age_s == 1.0
        # Each fresh report is registered; wait for a few, however long each proof takes.
        wait_until(lambda: tracker.count("/register") >= 3, timeout_s=120)
        wait_until(lambda: node.state is NodeState.SERVING)
    finally:
        node.stop()
    reports = [body["capability"] for body in tracker.registered]
    stamps = [report["validated_at"] for report in reports]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)  # each one fresh
    assert all(report["passed"] for report in reports)
    # Serving went on throughout: no state but serving until the stop, nothing stale.
    later = _states_after_serving(events)
    assert later[: later.index(NodeState.DRAINING)] == [NodeState.SERVING]
    assert not any(e.reason and "stale" in e.reason for e in events)
    fresh = [e for e in events if e.gate is Gate.ADMISSION and "fresh" in e.message]
    assert len(fresh) >= 2


def test_a_registration_refused_as_stale_proves_again_and_registers_by_itself(
    tiny_model_dir: Path,
) -> None:
    tracker = FakeTracker()
    tracker.register_refusals = [STALE]
    node, events = make_node(tiny_model_dir, tracker)
    node.start()  # the first answer is 422 stale; the node recovers by itself
    try:
        assert node.state is NodeState.SERVING
    finally:
        node.stop()
    first, second = (body["capability"] for body in tracker.registered[:2])
    assert second["validated_at"] > first["validated_at"]  # a new proof, not the old report
    capability = [e for e in events if e.gate is Gate.CAPABILITY]
    assert len(capability) == 2 and all(e.gate_state is GateState.PASSED for e in capability)


def test_a_stale_refusal_on_re_registration_is_recovered_while_serving(
    tiny_model_dir: Path,
) -> None:
    tracker = FakeTracker(heartbeat_answers=[410])

    def refuse_the_second() -> None:  # the re-registration after the 410 is refused as stale
        if len(tracker.registered) == 2:
            tracker.register_refusals.append(STALE)

    tracker.on_register = refuse_the_second
    node, events = make_node(tiny_model_dir, tracker)
    node.start()
    try:
        wait_until(lambda: tracker.count("/register") >= 3)
        wait_until(lambda: node.state is NodeState.SERVING)
    finally:
        node.stop()
    refused, accepted = tracker.registered[1:3]
    assert accepted["capability"]["validated_at"] > refused["capability"]["validated_at"]
    assert not any(e.state is NodeState.RECONNECTING for e in events)


def test_registering_a_relayed_endpoint_checks_the_reports_age_first(
    tiny_model_dir: Path,
) -> None:
    tracker = FakeTracker()
    node, _events = make_node(tiny_model_dir, tracker)
    node.start()
    try:
        serving = node._serving
        assert serving is not None
        serving.stop()  # drive the loop's step by hand
        node._tracker.max_age_s = 1e-6  # the tracker's limit has passed since
        serving._register_relayed()
    finally:
        node.stop()
    before, relayed = (body["capability"] for body in tracker.registered[:2])
    assert relayed["validated_at"] > before["validated_at"]  # proven again, not resent
