"""The tracker's capability gate against the seed's cases: its reasons and its order.

Each case breaks one or more things at once; the gate must name the one the
seed's order reaches first (no report, model, shard, recipe, backend and device,
passed, too old, from the future), so the tracker is never looser than the node.
The codes are the seed's, the same the node's gate gives.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.tracker_service.helpers import OTHER_CONTENT, capability, identity_block
from tracker_service.domain.capability_gate import DEFAULT_MAX_REPORT_AGE_S, check_capability
from tracker_service.domain.capability_report import CapabilityReportIn
from tracker_service.domain.recipe_identity import parse_identity
from tracker_service.errors import TrackerRefusal

NOW = 1_800_000_000.0
IDENTITY = identity_block(0, 15)
PRESENTED = parse_identity(IDENTITY)

WRONG_MODEL = {"model": {"model_id": "someone/else", "content_digest": PRESENTED.content_digest}}
OTHER_BYTES = {"model": {"model_id": PRESENTED.artifact_id, "content_digest": OTHER_CONTENT}}
WRONG_SHARD = {"shard": {"start": 0, "end": 10}}
WRONG_RECIPE = {
    "recipe": {
        "recipe_id": "other",
        "recipe_version": "1",
        "runtime_recipe_digest": PRESENTED.runtime_recipe_digest,
    }
}
WRONG_DIGEST = {
    "recipe": {
        "recipe_id": PRESENTED.recipe_id,
        "recipe_version": PRESENTED.recipe_version,
        "runtime_recipe_digest": "f" * 64,
    }
}
WRONG_BACKEND = {"backend": {"backend_id": "cuda", "device": "cuda:0"}}
NO_DEVICE = {"backend": {"backend_id": PRESENTED.axes["backend_id"], "device": ""}}
FAILED = {"status": "failed", "passed": False, "diagnostics": ["nan in hidden states"]}
OLD = {"validated_at": NOW - DEFAULT_MAX_REPORT_AGE_S - 60}
FUTURE = {"validated_at": NOW + 120}


def _report(**overrides: Any) -> CapabilityReportIn:
    data = capability(IDENTITY, validated_at=NOW)
    data.update(overrides)
    return CapabilityReportIn.model_validate(data)


def _reason(report: CapabilityReportIn | None, **kw: Any) -> str:
    with pytest.raises(TrackerRefusal) as caught:
        check_capability(report, PRESENTED, now=NOW, **{"device_class": "cpu", **kw})
    assert caught.value.status_code == 422
    return caught.value.reason


# (name, faults, expected reason): each case also carries every fault the seed
# checks later, so only the order decides which reason is named.
SEED_ORDER = [
    (
        "model",
        [WRONG_MODEL, WRONG_SHARD, WRONG_RECIPE, WRONG_BACKEND, FAILED, OLD],
        "model-mismatch",
    ),
    ("model-bytes", [OTHER_BYTES, WRONG_SHARD, WRONG_RECIPE, FAILED], "model-mismatch"),
    ("shard", [WRONG_SHARD, WRONG_RECIPE, WRONG_BACKEND, FAILED, OLD], "shard-mismatch"),
    ("recipe", [WRONG_RECIPE, WRONG_BACKEND, FAILED, OLD], "recipe-mismatch"),
    ("recipe-digest", [WRONG_DIGEST, WRONG_BACKEND, FAILED, FUTURE], "recipe-mismatch"),
    ("backend", [WRONG_BACKEND, FAILED, OLD], "backend-mismatch"),
    ("device", [NO_DEVICE, FAILED, OLD], "backend-mismatch"),
    ("passed", [FAILED, OLD], "not-passed"),
    ("stale", [OLD], "stale"),
    ("future", [FUTURE], "stale"),
]


@pytest.mark.parametrize(
    ("faults", "expected"), [pytest.param(f, e, id=n) for n, f, e in SEED_ORDER]
)
def test_gate_names_the_first_fault_in_the_seeds_order(
    faults: list[dict[str, Any]], expected: str
) -> None:
    overrides: dict[str, Any] = {}
    for fault in reversed(faults):
        overrides.update(fault)
    assert _reason(_report(**overrides)) == expected


def test_no_report_is_refused_before_anything_else() -> None:
    assert _reason(None) == "no-report"


def test_passed_is_read_from_status_not_the_flag() -> None:
    assert _reason(_report(status="aborted", passed=True)) == "not-passed"
    assert _reason(_report(status="passed", passed=False)) == "not-passed"
    check_capability(_report(status="passed", passed=None), PRESENTED, now=NOW, device_class="cpu")


def test_default_age_limit_is_the_seeds_900_seconds() -> None:
    check_capability(_report(validated_at=NOW - 899), PRESENTED, now=NOW, device_class="cpu")
    assert _reason(_report(validated_at=NOW - 901)) == "stale"


def test_operator_may_set_another_age_limit() -> None:
    check_capability(
        _report(validated_at=NOW - 3000), PRESENTED, now=NOW, device_class="cpu", max_age_s=3600
    )
    assert _reason(_report(validated_at=NOW - 100), max_age_s=60) == "stale"


def test_sixty_seconds_of_future_skew_is_tolerated_and_no_more() -> None:
    check_capability(_report(validated_at=NOW + 59), PRESENTED, now=NOW, device_class="cpu")
    assert _reason(_report(validated_at=NOW + 61)) == "stale"


def test_a_matching_fresh_passing_report_admits() -> None:
    check_capability(
        _report(validated_at=time.time()), PRESENTED, now=time.time(), device_class="cpu"
    )


@pytest.mark.parametrize("device", ["cuda:7", "cuda", "some-other-device", "mps", "cpu:x:y "])
def test_a_report_from_another_device_class_is_refused(device: str) -> None:
    report = _report(backend={"backend_id": PRESENTED.axes["backend_id"], "device": device})
    with pytest.raises(TrackerRefusal) as caught:
        check_capability(report, PRESENTED, now=NOW, device_class="cpu")
    assert caught.value.reason == "backend-mismatch"
    assert device.strip() in caught.value.message and "cpu device" in caught.value.message


@pytest.mark.parametrize("device", ["cuda:7", "cuda:0", "cuda"])
def test_any_device_of_the_advertised_class_is_admitted(device: str) -> None:
    report = _report(backend={"backend_id": PRESENTED.axes["backend_id"], "device": device})
    check_capability(report, PRESENTED, now=NOW, device_class="cuda")


@pytest.mark.parametrize("advertised", [None, "", "some-other-device", "gpu", "cuda:0"])
def test_a_registration_must_advertise_a_known_device_class(advertised: str | None) -> None:
    with pytest.raises(TrackerRefusal) as caught:
        check_capability(_report(), PRESENTED, now=NOW, device_class=advertised)
    assert caught.value.reason == "backend-mismatch"
    assert "device_class" in caught.value.message


VECTORS = Path(__file__).resolve().parents[2] / "data" / "admission_vectors.json"


def _vector_cases() -> list[Any]:
    data = json.loads(VECTORS.read_text(encoding="utf-8"))
    return [pytest.param(data, case, id=case["name"]) for case in data["cases"]]


@pytest.mark.parametrize(("data", "case"), _vector_cases())
def test_tracker_gate_names_the_same_reason_as_the_nodes_gate(
    data: dict[str, Any], case: dict[str, Any]
) -> None:
    identity = parse_identity(data["identity"])
    report = None if case["report"] is None else CapabilityReportIn.model_validate(case["report"])
    kw: dict[str, Any] = {
        "now": data["now"],
        "max_age_s": data["max_age_s"],
        "device_class": data["device_class"],
    }
    if case["reason"] is None:
        check_capability(report, identity, **kw)
        return
    with pytest.raises(TrackerRefusal) as caught:
        check_capability(report, identity, **kw)
    assert caught.value.reason == f"{case['reason']}"
