"""The doctor's "Passed" means the node can serve: its data plane starts once on loopback.

A node child once died importing its data plane six seconds after the wizard's
test had passed (websockets older than ``core/dataplane/plain_http.py`` needs).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from core.doctor.capability import STATUS_FAILED, load_report
from core.doctor.checkup import DoctorRequest, run_doctor
from core.doctor.serving_check import REASON_SERVING_FAILED


def test_a_passed_test_has_started_the_data_plane_on_loopback(
    tiny_model_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="core.doctor.serving_check"):
        outcome = run_doctor(DoctorRequest(model=str(tiny_model_dir)))
    assert outcome.report.passed and outcome.reason is None
    assert any("listened on 127.0.0.1:" in r.getMessage() for r in caplog.records)


def test_a_data_plane_that_cannot_load_fails_the_test_with_a_sentence(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # what a too-old websockets did: importing the data plane's server raises
    monkeypatch.setitem(sys.modules, "core.dataplane.server", None)
    outcome = run_doctor(DoctorRequest(model=str(tiny_model_dir)))
    report = outcome.report
    assert not report.passed and report.status == STATUS_FAILED
    assert outcome.reason == REASON_SERVING_FAILED
    (sentence,) = report.diagnostics
    assert "cannot serve yet" in sentence and "test again" in sentence
    assert load_report("tiny-llama", 0, 4, "llama-fp32") == report  # admission refuses it
