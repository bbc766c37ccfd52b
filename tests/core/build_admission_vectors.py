"""Admission vectors: the seed's gate cases, judged by the node's gate, for the tracker.

    python -m tests.core.build_vectors     # rewrites tests/data/admission_vectors.json too

Each case is a capability report against one advertised identity block, with
the reason ``core.doctor.admission_gate.admit`` gives (null: admitted). The tracker's
independent gate (``tracker_service/api/capability_gate.py``), told the node advertises
``device_class``, must answer the same reason for every case, so the two gates cannot drift: the
tracker is never looser than the node, and names the same first fault.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from core.doctor.admission_gate import AdmissionRequirement, admit
from core.doctor.capability import CapabilityReport
from core.errors import CapabilityAdmissionError

DATA_DIR = Path(__file__).resolve().parents[1] / "data"
ADMISSION_VECTORS = DATA_DIR / "admission_vectors.json"

NOW = 1_767_225_600.0
DEVICE = "cpu"


def _report(block: dict[str, Any]) -> dict[str, Any]:
    """A passing report that proves exactly ``block`` (what the doctor would write)."""
    return {
        "schema_version": 1,
        "model": {
            "model_id": block["artifact"]["artifact_id"],
            "revision": block["artifact"]["revision"],
            "content_digest": block["artifact"]["content_digest"],
        },
        "shard": {"start": block["shard_start"], "end": block["shard_end"]},
        "recipe": {
            "recipe_id": block["recipe"]["recipe_id"],
            "recipe_version": block["recipe"]["recipe_version"],
            "runtime_recipe_digest": block["fingerprint"]["runtime_recipe_digest"],
        },
        "backend": {"backend_id": block["recipe"]["backend_id"], "device": DEVICE},
        "status": "passed",
        "passed": True,
        "diagnostics": [],
        "checks": [],
        "validated_at": NOW - 30,
        "tokens_per_second": 40.0,
        "wall_time_s": 1.0,
        "memory": {},
        "timings": {},
    }


def _requirement(block: dict[str, Any]) -> AdmissionRequirement:
    """The node's requirement for ``block``, as start-up builds it from what it advertises."""
    return AdmissionRequirement(
        model_id=block["artifact"]["artifact_id"],
        shard_start=block["shard_start"],
        shard_end=block["shard_end"],
        recipe_id=block["recipe"]["recipe_id"],
        recipe_version=block["recipe"]["recipe_version"],
        backend_id=block["recipe"]["backend_id"],
        device=DEVICE,
        content_digest=block["artifact"]["content_digest"],
        runtime_recipe_digest=block["fingerprint"]["runtime_recipe_digest"],
    )


_FAULTS: dict[str, tuple[tuple[str, ...], Any]] = {
    "model": (("model", "model_id"), "someone-else/model"),
    "bytes": (("model", "content_digest"), "0" * 64),
    "shard": (("shard", "end"), 10),
    "recipe": (("recipe", "recipe_id"), "other-recipe"),
    "version": (("recipe", "recipe_version"), "99"),
    "digest": (("recipe", "runtime_recipe_digest"), "f" * 64),
    "no-digest": (("recipe", "runtime_recipe_digest"), ""),
    "backend": (("backend", "backend_id"), "other-backend"),
    "no-device": (("backend", "device"), ""),
    "cuda-device": (("backend", "device"), "cuda:7"),
    "odd-device": (("backend", "device"), "some-other-device"),
    "failed": (("status",), "failed"),
    "aborted": (("status",), "aborted"),
    "old": (("validated_at",), NOW - 901),
    "future": (("validated_at",), NOW + 61),
}
# Each case carries every fault listed (in any order); only the seed's order
# decides which one the gate names.
_CASES: list[tuple[str, tuple[str, ...]]] = [
    ("admitted", ()),
    ("just-fresh", ()),
    ("model", ("model", "shard", "recipe", "backend", "failed", "old")),
    ("model-bytes", ("bytes", "shard", "digest", "failed")),
    ("shard", ("shard", "recipe", "backend", "failed", "future")),
    ("recipe", ("recipe", "backend", "failed", "old")),
    ("recipe-version", ("version", "no-device", "aborted")),
    ("recipe-digest", ("digest", "backend", "failed")),
    ("recipe-without-digest", ("no-digest", "failed")),
    ("backend", ("backend", "failed", "old")),
    ("device", ("no-device", "aborted", "future")),
    ("device-other-class", ("cuda-device", "failed", "old")),
    ("device-no-class", ("odd-device", "aborted")),
    ("failed", ("failed", "old")),
    ("aborted", ("aborted",)),
    ("stale", ("old",)),
    ("future", ("future",)),
]


def _apply(report: dict[str, Any], fault: str) -> None:
    path, value = _FAULTS[fault]
    target = report
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    if path == ("status",):
        report["passed"] = value == "passed"


def build_admission_vectors(block: dict[str, Any]) -> dict[str, Any]:
    cases = []
    for name, faults in _CASES:
        report = _report(block)
        for fault in faults:
            _apply(report, fault)
        if name == "just-fresh":
            report["validated_at"] = NOW - 899
        try:
            admit(_requirement(block), CapabilityReport.from_dict(report), now=NOW)
            reason = None
        except CapabilityAdmissionError as exc:
            reason = exc.reason
        cases.append({"name": name, "report": copy.deepcopy(report), "reason": reason})
    cases.append({"name": "no-report", "report": None, "reason": _no_report(block)})
    return {
        "description": (
            "Capability reports against one advertised identity block, with the reason the "
            "node's gate (core.doctor.admission_gate.admit, 900 s limit, 60 s skew) names "
            "first; null "
            "means admitted. The tracker, told the node advertises device_class, must answer "
            "the same reason (422) for each. Written by tests/core/build_vectors.py."
        ),
        "now": NOW,
        "device_class": DEVICE,
        "max_age_s": 900.0,
        "identity": block,
        "cases": cases,
    }


def _no_report(block: dict[str, Any]) -> str:
    try:
        admit(_requirement(block), None, now=NOW)
    except CapabilityAdmissionError as exc:
        return exc.reason
    raise AssertionError("the gate admitted no report")
