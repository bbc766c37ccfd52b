"""The fail-closed admission gate: every reason code, the order of checks, the clock."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from core.doctor.admission_gate import (
    DEFAULT_MAX_REPORT_AGE_SECONDS,
    MAX_CLOCK_SKEW_SECONDS,
    REASON_BACKEND_MISMATCH,
    REASON_MODEL_MISMATCH,
    REASON_NO_REPORT,
    REASON_NOT_PASSED,
    REASON_RECIPE_MISMATCH,
    REASON_SHARD_MISMATCH,
    REASON_STALE,
    AdmissionRequirement,
    CapabilityContext,
    admit,
    admit_for_start,
)
from core.doctor.capability import (
    STATUS_FAILED,
    STATUS_PASSED,
    BackendInfo,
    CapabilityReport,
    ModelInfo,
    RecipeInfo,
    ShardInfo,
)
from core.doctor.checkup import DoctorSelection
from core.errors import CapabilityAdmissionError, DoctorError, MeshnetError
from core.models.manifest import ModelManifest
from core.recipes.catalogue import load_catalogue, resolve_runtime_recipe
from core.runtime.shard import Shard
from tests.core.conftest import copy_model

T0 = 1_800_000_000.0

REQUIREMENT = AdmissionRequirement(
    model_id="smollm2-135m-instruct",
    shard_start=0,
    shard_end=15,
    recipe_id="llama-fp32",
    recipe_version="1",
    backend_id="meshnet-torch",
    device="cpu",
)


def _report(**changes: object) -> CapabilityReport:
    report = CapabilityReport(
        model=ModelInfo("smollm2-135m-instruct"),
        shard=ShardInfo(0, 15),
        recipe=RecipeInfo("llama-fp32", "1"),
        backend=BackendInfo("meshnet-torch", "cpu"),
        status=STATUS_PASSED,
        validated_at=T0,
    )
    return replace(report, **changes)  # type: ignore[arg-type]


def _reason(report: CapabilityReport | None, now: float = T0) -> str:
    with pytest.raises(CapabilityAdmissionError) as info:
        admit(REQUIREMENT, report, now=now)
    return info.value.reason


def test_a_fresh_passing_report_for_the_exact_selection_is_admitted() -> None:
    report = _report()
    assert admit(REQUIREMENT, report, now=T0 + 10) is report


def test_no_report_is_refused_with_no_report() -> None:
    assert _reason(None) == REASON_NO_REPORT


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"model": ModelInfo("other-model")}, REASON_MODEL_MISMATCH),
        ({"shard": ShardInfo(0, 16)}, REASON_SHARD_MISMATCH),
        ({"shard": ShardInfo(1, 15)}, REASON_SHARD_MISMATCH),
        ({"recipe": RecipeInfo("llama-bf16", "1")}, REASON_RECIPE_MISMATCH),
        ({"recipe": RecipeInfo("llama-fp32", "2")}, REASON_RECIPE_MISMATCH),
        ({"backend": BackendInfo("other-backend", "cpu")}, REASON_BACKEND_MISMATCH),
        ({"backend": BackendInfo("meshnet-torch", "cuda")}, REASON_BACKEND_MISMATCH),
        ({"status": STATUS_FAILED}, REASON_NOT_PASSED),
    ],
)
def test_each_mismatch_is_refused_with_its_reason_code(
    changes: dict[str, object], reason: str
) -> None:
    assert _reason(_report(**changes)) == reason


def test_refusal_sentence_names_both_sides_and_the_fix() -> None:
    with pytest.raises(CapabilityAdmissionError) as info:
        admit(REQUIREMENT, _report(shard=ShardInfo(0, 10)), now=T0)
    message = str(info.value)
    assert "layers 0–10" in message and "layers 0–15" in message
    assert "meshnet-node doctor" in message


def test_not_passed_refusal_carries_the_reports_diagnostics() -> None:
    sentence = (
        "Not enough GPU memory: this range needs 3.1 GB, 2.2 GB is free. Choose fewer layers."
    )
    with pytest.raises(CapabilityAdmissionError) as info:
        admit(REQUIREMENT, _report(status=STATUS_FAILED, diagnostics=(sentence,)), now=T0)
    assert sentence in str(info.value)


def test_selection_is_checked_before_pass_fail_and_freshness() -> None:
    stale_failed = {"status": STATUS_FAILED, "validated_at": T0 - 10_000}
    assert _reason(_report(model=ModelInfo("x"), **stale_failed)) == REASON_MODEL_MISMATCH
    assert _reason(_report(shard=ShardInfo(3, 4), **stale_failed)) == REASON_SHARD_MISMATCH
    assert _reason(_report(recipe=RecipeInfo("r", "9"), **stale_failed)) == REASON_RECIPE_MISMATCH
    assert (
        _reason(_report(backend=BackendInfo("b", "mps"), **stale_failed)) == REASON_BACKEND_MISMATCH
    )


def test_model_is_checked_before_shard_recipe_and_backend() -> None:
    everything_wrong = _report(
        model=ModelInfo("x"),
        shard=ShardInfo(3, 4),
        recipe=RecipeInfo("r", "9"),
        backend=BackendInfo("b", "mps"),
    )
    assert _reason(everything_wrong) == REASON_MODEL_MISMATCH
    assert _reason(replace(everything_wrong, model=ModelInfo(REQUIREMENT.model_id))) == (
        REASON_SHARD_MISMATCH
    )


def test_pass_fail_is_checked_before_freshness() -> None:
    assert _reason(_report(status=STATUS_FAILED, validated_at=T0 - 10_000)) == REASON_NOT_PASSED


def test_report_exactly_900_s_old_passes_and_one_millisecond_more_is_stale() -> None:
    assert DEFAULT_MAX_REPORT_AGE_SECONDS == 900.0
    admit(REQUIREMENT, _report(), now=T0 + 900.0)
    assert _reason(_report(), now=T0 + 900.001) == REASON_STALE


def test_stale_sentence_states_the_age_and_the_limit() -> None:
    with pytest.raises(CapabilityAdmissionError) as info:
        admit(REQUIREMENT, _report(), now=T0 + 1800)
    assert "30 min old (limit 15 min)" in str(info.value)


def test_report_60_s_in_the_future_passes_and_one_millisecond_more_is_refused() -> None:
    assert MAX_CLOCK_SKEW_SECONDS == 60.0
    admit(REQUIREMENT, _report(), now=T0 - 60.0)
    with pytest.raises(CapabilityAdmissionError) as info:
        admit(REQUIREMENT, _report(), now=T0 - 60.001)
    assert info.value.reason == REASON_STALE
    assert "in the future" in str(info.value)


def test_far_future_report_is_refused() -> None:
    assert _reason(_report(validated_at=T0 + 86_400)) == REASON_STALE


def test_max_age_is_per_requirement() -> None:
    strict = replace(REQUIREMENT, max_age_seconds=10.0)
    admit(strict, _report(), now=T0 + 10.0)
    with pytest.raises(CapabilityAdmissionError):
        admit(strict, _report(), now=T0 + 10.5)


def test_admission_error_is_a_meshnet_error_with_the_reason() -> None:
    error = CapabilityAdmissionError(REASON_STALE, "old")
    assert isinstance(error, MeshnetError)
    assert error.reason == REASON_STALE and error.message == "old"


# -- admit_for_start with a loaded shard ----------------------------------------------


def _context(model_dir: Path, start: int, end: int) -> CapabilityContext:
    catalogue = load_catalogue()
    shard = Shard.load(model_dir, start, end)
    runtime = resolve_runtime_recipe(
        catalogue.get("llama-fp32"), shard, model_dir, catalogue.catalogue_version
    )
    manifest = ModelManifest.load(model_dir)
    return CapabilityContext(
        backend=shard,
        selection=DoctorSelection(manifest.model_id, start, end),
        recipe=runtime,
        manifest=manifest,
        device=str(shard.device),
    )


def test_requirement_for_context_takes_the_selection_recipe_and_device(
    tiny_model_dir: Path,
) -> None:
    requirement = AdmissionRequirement.for_context(_context(tiny_model_dir, 1, 3))
    assert requirement == AdmissionRequirement(
        model_id="tiny-llama",
        shard_start=1,
        shard_end=3,
        recipe_id="llama-fp32",
        recipe_version="1",
        backend_id="meshnet-torch",
        device="cpu",
    )


def test_admit_for_start_judges_what_the_explicit_validator_returns(tiny_model_dir: Path) -> None:
    context = _context(tiny_model_dir, 0, 2)
    seen: list[CapabilityContext] = []

    def validator(ctx: CapabilityContext) -> CapabilityReport:
        seen.append(ctx)
        return _report(model=ModelInfo("tiny-llama"), shard=ShardInfo(0, 2), validated_at=T0)

    report = admit_for_start(context, validator=validator, now=T0 + 1)
    assert seen == [context] and report.shard == ShardInfo(0, 2)
    with pytest.raises(CapabilityAdmissionError) as info:
        admit_for_start(context, validator=validator, now=T0 + 901)
    assert info.value.reason == REASON_STALE


def test_a_validator_that_cannot_run_refuses_admission(tiny_model_dir: Path) -> None:
    def broken(_ctx: CapabilityContext) -> CapabilityReport:
        raise DoctorError("the GPU vanished")

    with pytest.raises(CapabilityAdmissionError) as info:
        admit_for_start(_context(tiny_model_dir, 0, 2), validator=broken)
    assert info.value.reason == REASON_NOT_PASSED
    assert "the GPU vanished" in str(info.value)


@pytest.mark.parametrize(("start", "end"), [(0, 4), (1, 3), (2, 4)])
def test_production_validator_runs_a_real_forward_and_admits(
    tiny_model_dir: Path, start: int, end: int
) -> None:
    report = admit_for_start(_context(tiny_model_dir, start, end))
    assert report.passed
    assert {c.name for c in report.checks} >= {"finite", "deterministic", "incremental"}
    assert report.tokens_per_second is not None and report.tokens_per_second > 0


@pytest.mark.parametrize(("start", "end"), [(0, 2), (2, 4)])
def test_production_validator_refuses_a_shard_with_a_corrupted_weight(
    tiny_model_dir: Path, tmp_path: Path, start: int, end: int
) -> None:
    model_dir = copy_model(tiny_model_dir, tmp_path / "damaged")
    weights = load_file(model_dir / "model.safetensors")
    name = f"model.layers.{start + 1}.mlp.down_proj.weight"
    weights[name][0, 0] = float("nan")
    save_file(weights, model_dir / "model.safetensors", metadata={"format": "pt"})

    with pytest.raises(CapabilityAdmissionError) as info:
        admit_for_start(_context(model_dir, start, end))
    assert info.value.reason == REASON_NOT_PASSED
    assert "NaN" in str(info.value)
    assert torch.isnan(weights[name]).any()  # the damage really was in the loaded layers


def test_report_without_the_advertised_bytes_or_recipe_digest_is_refused() -> None:
    import dataclasses as _dc

    from core.doctor.admission_gate import (
        REASON_MODEL_MISMATCH,
        REASON_RECIPE_MISMATCH,
        AdmissionRequirement,
    )
    from core.doctor.capability import (
        BackendInfo,
        CapabilityReport,
        ModelInfo,
        RecipeInfo,
        ShardInfo,
    )

    now = 1_800_000_000.0
    requirement = AdmissionRequirement(
        "m",
        0,
        2,
        "r",
        "1",
        "torch-cpu",
        "cpu",
        content_digest="a" * 64,
        runtime_recipe_digest="b" * 64,
    )
    report = CapabilityReport(
        ModelInfo("m", "rev", "a" * 64),
        ShardInfo(0, 2),
        RecipeInfo("r", "1", "b" * 64),
        BackendInfo("torch-cpu", "cpu"),
        "passed",
        now,
    )
    assert admit(requirement, report, now=now) is report
    unproven_bytes = _dc.replace(report, model=ModelInfo("m", "rev", ""))
    with pytest.raises(CapabilityAdmissionError) as caught:
        admit(requirement, unproven_bytes, now=now)
    assert caught.value.reason == REASON_MODEL_MISMATCH
    unproven_recipe = _dc.replace(report, recipe=RecipeInfo("r", "1", ""))
    with pytest.raises(CapabilityAdmissionError) as caught:
        admit(requirement, unproven_recipe, now=now)
    assert caught.value.reason == REASON_RECIPE_MISMATCH


def test_committed_admission_vectors_equal_a_fresh_build_of_the_gate() -> None:
    from tests.core.build_admission_vectors import ADMISSION_VECTORS
    from tests.core.build_vectors import build_admission_vectors_doc, render

    assert ADMISSION_VECTORS.read_text(encoding="utf-8") == render(build_admission_vectors_doc())
