"""The seed's admission contract where the node differed: a failed proof is refused as
``not-passed`` (the doctor's own reason kept in the detail), and a reused report is
judged shard before recipe."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import pytest

import core.doctor.checkup
from core.doctor.admission_gate import REASON_NOT_PASSED, REASON_SHARD_MISMATCH
from core.doctor.capability import STATUS_FAILED
from core.doctor.checkup import DoctorRequest, ValidationResult, run_doctor
from core.errors import CapabilityAdmissionError
from core.events import NodeState
from tests.core.node.doubles import FakeTracker, make_node


def test_a_failed_test_forward_is_refused_as_not_passed_with_the_doctors_reason(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = core.doctor.checkup.validate_loaded_backend

    def failing(*args: Any, **kwargs: Any) -> ValidationResult:
        result = real(*args, **kwargs)
        report = dataclasses.replace(
            result.report, status=STATUS_FAILED, diagnostics=("the logits diverged",)
        )
        return ValidationResult(report, result.outcome)

    monkeypatch.setattr(core.doctor.checkup, "validate_loaded_backend", failing)
    tracker = FakeTracker()
    node, events = make_node(tiny_model_dir, tracker)
    with pytest.raises(CapabilityAdmissionError) as caught:
        node.start()
    assert caught.value.reason == REASON_NOT_PASSED
    assert "the logits diverged" in caught.value.message
    assert "probe-failed" in caught.value.message  # the doctor's own reason
    assert events[-1].state is NodeState.REFUSED and events[-1].reason == REASON_NOT_PASSED
    assert tracker.calls == []


def test_a_reused_report_for_another_shard_and_recipe_is_refused_for_its_shard(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    outcome = run_doctor(DoctorRequest(model=str(tiny_model_dir), layers=(0, 2), save=False))
    outcome.release()
    saved = outcome.report.to_dict()
    saved["shard"] = {**saved["shard"], "start": 1, "end": 3}
    saved["recipe"] = {**saved["recipe"], "runtime_recipe_digest": "f" * 64}
    saved["validated_at"] = time.time()
    path = tmp_path / "report.json"
    path.write_text(json.dumps(saved))
    tracker = FakeTracker()
    node, _events = make_node(tiny_model_dir, tracker, layers=(0, 2), report_path=path)
    with pytest.raises(CapabilityAdmissionError) as caught:
        node.start()
    assert caught.value.reason == REASON_SHARD_MISMATCH
    assert tracker.calls == []
