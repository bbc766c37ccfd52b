"""The doctor: real forwards through real (tiny) shards, reports, refusals, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from app.cli.node import main as node_main
from core.doctor.capability import (
    STATUS_ABORTED,
    STATUS_FAILED,
    STATUS_PASSED,
    CapabilityReport,
    load_report,
)
from core.doctor.checkup import (
    DoctorRequest,
    DoctorSelection,
    parse_layers,
    run_doctor,
    validate_loaded_backend,
)
from core.doctor.probe import Deadline, ProbePlan, probe_inputs
from core.errors import ConfigError, DoctorError, ProbeTimeout
from core.models.manifest import ModelManifest
from core.progress import Progress
from core.recipes.catalogue import load_catalogue, resolve_runtime_recipe
from core.runtime.shard import Shard
from tests.core.conftest import copy_model


def _validate(model_dir: Path, start: int, end: int, **kwargs: object) -> CapabilityReport:
    catalogue = load_catalogue()
    shard = Shard.load(model_dir, start, end)
    runtime = resolve_runtime_recipe(catalogue.get("llama-fp32"), shard, model_dir, "1")
    manifest = ModelManifest.load(model_dir)
    selection = DoctorSelection(manifest.model_id, start, end)
    return validate_loaded_backend(shard, selection, runtime, manifest, **kwargs).report  # type: ignore[arg-type]


def test_first_shard_probe_checks_hidden_states_and_passes(tiny_model_dir: Path) -> None:
    report = _validate(tiny_model_dir, 0, 2)
    assert report.status == STATUS_PASSED and report.passed
    checks = {c.name: c for c in report.checks}
    assert set(checks) == {"finite", "shape", "deterministic", "incremental"}
    assert "(1, 24, 64)" in checks["shape"].detail  # hidden states, width 64
    assert report.tokens_per_second is not None and report.tokens_per_second > 0


def test_last_shard_probe_also_checks_tokens_against_the_full_forward(tiny_model_dir: Path) -> None:
    report = _validate(tiny_model_dir, 2, 4)
    checks = {c.name: c for c in report.checks}
    assert checks["tokens"].passed
    assert "(1, 24, 96)" in checks["shape"].detail  # logits over the 96-token vocabulary


def test_middle_shard_is_fed_seeded_hidden_states_of_the_model_width(tiny_model_dir: Path) -> None:
    shard = Shard.load(tiny_model_dir, 1, 3)
    a, b = probe_inputs(shard, 5, seed=7), probe_inputs(shard, 5, seed=7)
    assert a.shape == (1, 5, 64) and a.dtype == torch.float32
    assert torch.equal(a, b)
    assert not torch.equal(a, probe_inputs(shard, 5, seed=8))
    assert _validate(tiny_model_dir, 1, 3).passed


def test_a_nan_weight_fails_the_probe_with_a_plain_sentence(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    model_dir = copy_model(tiny_model_dir, tmp_path / "damaged")
    weights = load_file(model_dir / "model.safetensors")
    weights["model.layers.1.self_attn.o_proj.weight"][3, 5] = float("nan")
    save_file(weights, model_dir / "model.safetensors", metadata={"format": "pt"})
    report = _validate(model_dir, 1, 3)
    assert report.status == STATUS_FAILED and not report.passed
    assert not {c.name: c for c in report.checks}["finite"].passed
    assert any("re-download the model" in d for d in report.diagnostics)


def test_a_probe_past_its_deadline_aborts_with_a_diagnostic(tiny_model_dir: Path) -> None:
    report = _validate(tiny_model_dir, 0, 4, deadline_s=0.0)
    assert report.status == STATUS_ABORTED
    assert "did not finish within 0 s" in report.diagnostics[0]
    assert "choose fewer layers" in report.diagnostics[0]


def test_deadline_raises_once_its_time_is_up() -> None:
    now = [0.0]
    deadline = Deadline(5.0, clock=lambda: now[0])
    deadline.check("start")
    now[0] = 5.5
    with pytest.raises(ProbeTimeout) as info:
        deadline.check("decode step 3")
    assert "decode step 3" in str(info.value)


def test_a_selection_that_differs_from_the_loaded_shard_fails(tiny_model_dir: Path) -> None:
    catalogue = load_catalogue()
    shard = Shard.load(tiny_model_dir, 0, 2)
    runtime = resolve_runtime_recipe(catalogue.get("llama-fp32"), shard, tiny_model_dir, "1")
    manifest = ModelManifest.load(tiny_model_dir)
    result = validate_loaded_backend(shard, DoctorSelection("tiny-llama", 0, 3), runtime, manifest)
    assert result.report.status == STATUS_FAILED
    assert "layers 0–2" in result.report.diagnostics[0]


def test_report_round_trips_through_json(tiny_model_dir: Path) -> None:
    report = _validate(tiny_model_dir, 0, 4, plan=ProbePlan(prompt_tokens=4, decode_tokens=4))
    again = CapabilityReport.from_dict(json.loads(json.dumps(report.to_dict())))
    assert again == report


def test_report_that_claims_passed_with_a_failed_status_is_rejected() -> None:
    data = _minimal_report_dict(status="failed", passed=True)
    with pytest.raises(DoctorError) as info:
        CapabilityReport.from_dict(data)
    assert info.value.reason == "bad-report"


def test_malformed_report_is_rejected_with_a_reason() -> None:
    data = _minimal_report_dict()
    del data["shard"]
    with pytest.raises(DoctorError):
        CapabilityReport.from_dict(data)


def _minimal_report_dict(status: str = "passed", passed: bool = True) -> dict[str, object]:
    return {
        "schema_version": 1,
        "model": {"model_id": "m"},
        "shard": {"start": 0, "end": 1},
        "recipe": {"recipe_id": "r", "recipe_version": "1"},
        "backend": {"backend_id": "b", "device": "cpu"},
        "status": status,
        "passed": passed,
        "validated_at": 1.0,
    }


# -- run_doctor: the whole flow ----------------------------------------------------------


def test_run_doctor_suggests_the_whole_tiny_model_and_saves_a_passing_report(
    tiny_model_dir: Path,
) -> None:
    seen: list[Progress] = []
    outcome = run_doctor(DoctorRequest(model=str(tiny_model_dir)), progress=seen.append)
    messages = [p.message for p in seen]
    report = outcome.report
    assert report.passed and (report.shard.start, report.shard.end) == (0, 4)
    assert report.timings["load_s"] > 0 and report.wall_time_s >= report.timings["load_s"]
    assert report.memory["needed_bytes"] <= report.memory["free_bytes"]
    assert any("Loading layers 0–4" in m for m in messages)
    assert load_report("tiny-llama", 0, 4, "llama-fp32") == report
    assert outcome.identity_block is not None
    assert outcome.identity_block["fingerprint"]["runtime_recipe_digest"] == (
        report.recipe.runtime_recipe_digest
    )


def test_run_doctor_refuses_before_loading_when_the_range_does_not_fit(
    tiny_model_dir: Path,
) -> None:
    # Asking for room for a trillion KV positions makes any range too big for this machine.
    outcome = run_doctor(DoctorRequest(model=str(tiny_model_dir), layers=(0, 2), kv_tokens=10**12))
    report = outcome.report
    assert report.status == STATUS_ABORTED and outcome.shard is None
    assert report.diagnostics[0].startswith("Not enough memory: this range needs ")
    assert report.diagnostics[0].endswith("is free. Choose fewer layers.")


def test_run_doctor_refuses_layers_the_model_does_not_have(tiny_model_dir: Path) -> None:
    outcome = run_doctor(DoctorRequest(model=str(tiny_model_dir), layers=(2, 9)))
    assert outcome.report.status == STATUS_ABORTED
    assert "This model has 4 layers" in outcome.report.diagnostics[0]


def test_run_doctor_with_the_bf16_recipe_loads_bf16(tiny_model_dir: Path) -> None:
    outcome = run_doctor(
        DoctorRequest(model=str(tiny_model_dir), layers=(1, 3), recipe_id="llama-bf16")
    )
    assert outcome.shard is not None and outcome.shard.compute_dtype == torch.bfloat16
    assert outcome.report.recipe.recipe_id == "llama-bf16"
    assert outcome.report.passed


def test_run_doctor_sizes_a_q4_range_at_its_packed_bytes_and_one_layer_read(
    tiny_model_dir: Path,
) -> None:
    """llama-q4 reads each layer in float32 and quantizes it before the next: the doctor
    counts the packed weights (what the loaded shard holds) plus that working set, not
    the range's float32 size."""
    from core.doctor.hardware import tensor_shapes
    from core.doctor.hardware_report import recipe_footprint

    outcome = run_doctor(
        DoctorRequest(model=str(tiny_model_dir), layers=(1, 3), recipe_id="llama-q4")
    )
    assert outcome.report.passed and outcome.shard is not None
    memory = outcome.report.memory
    assert memory["weight_bytes"] == outcome.shard.weight_bytes()
    fp32 = Shard.load(tiny_model_dir, 1, 3).weight_bytes()
    assert memory["weight_bytes"] < fp32 / 4
    footprint = recipe_footprint(
        tensor_shapes(tiny_model_dir),
        outcome.shard.config,
        load_catalogue().get("llama-q4"),
    )
    assert memory["needed_bytes"] == footprint.needed_bytes(1, 3, DoctorRequest().kv_tokens)
    read = footprint.layer_read_bytes[1:3]
    assert footprint.load_bytes(1, 3) == min(3 * max(read), sum(read)) > 0


@pytest.mark.parametrize("text", ["3", "a:b", "5:2", "-1:3", "1:2:3"])
def test_parse_layers_refuses_what_is_not_a_forward_range(text: str) -> None:
    with pytest.raises(ConfigError):
        parse_layers(text)


def test_parse_layers_reads_end_exclusive_ranges() -> None:
    assert parse_layers("0:15") == (0, 15)


# -- the CLI ----------------------------------------------------------------------------


def test_doctor_json_prints_exactly_the_saved_report_and_exits_0(
    tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = node_main(["doctor", "--model", str(tiny_model_dir), "--layers", "1:3", "--json"])
    captured = capsys.readouterr()
    printed = json.loads(captured.out)
    assert code == 0
    assert printed == load_report("tiny-llama", 1, 3, "llama-fp32").to_dict()  # type: ignore[union-attr]
    lines = [json.loads(line) for line in captured.err.splitlines() if line.startswith("{")]
    progress = [line for line in lines if line["kind"] == "progress"]
    assert progress[0]["message"].startswith("Loading layers 1–3")
    assert {p["data"]["stage"] for p in progress} == {"load", "probe"}
    assert all(set(p["data"]) == {"stage", "done", "total"} for p in progress)
    saved = next(line for line in lines if line["kind"] == "report-saved")
    assert json.loads(Path(saved["data"]["path"]).read_text()) == printed
    assert lines[-1] == {
        "kind": "result",
        "reason": None,
        "message": "passed",
        "data": {"passed": True, "status": "passed"},
    }


def test_doctor_json_names_the_reason_of_a_refusal_under_a_memory_cap(
    tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["doctor", "--model", str(tiny_model_dir), "--memory-cap-mb", "1", "--json"]
    code = node_main(argv)
    captured = capsys.readouterr()
    assert code == 1
    report = json.loads(captured.out)
    assert report["status"] == "aborted" and report["memory"]["free_bytes"] == 1024**2
    result = json.loads(captured.err.splitlines()[-1])
    assert result["reason"] == "out-of-memory"
    assert result["message"].startswith("Not enough memory: even one layer")
    assert "Traceback" not in captured.err


def test_doctor_table_exits_1_and_explains_when_it_does_not_pass(
    tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = node_main(["doctor", "--model", str(tiny_model_dir), "--layers", "0:7"])
    out = capsys.readouterr().out
    assert code == 1
    assert "ABORTED" in out and "This model has 4 layers" in out


@pytest.mark.slow
def test_doctor_passes_on_the_whole_default_model_on_the_cpu(
    default_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = node_main(["doctor", "--model", str(default_model_dir), "--device", "cpu", "--json"])
    report = CapabilityReport.from_dict(json.loads(capsys.readouterr().out))
    assert code == 0 and report.passed
    assert (report.shard.start, report.shard.end) == (0, 30)
    assert report.model.model_id == "smollm2-135m-instruct"
    assert report.wall_time_s > 0 and report.tokens_per_second is not None
