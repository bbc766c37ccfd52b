"""The doctor: find the hardware, pick a layer range that fits, prove it with a real forward.

``run_doctor`` is the whole user-facing flow (CLI and GUI wizard call it):
resolve the model, measure the machine, choose the range (or take ``--layers``),
refuse before loading when the range does not fit, load the shard with the
recipe's dtypes, run the bounded probe (core.doctor.probe) and save the
:class:`~core.doctor.capability.CapabilityReport`. ``validate_loaded_backend`` is the
part admission re-runs in-process at node start-up.

Every refusal ends up as a report with plain-language diagnostics and a
reason code (``DoctorOutcome.reason``: out-of-memory, bad-layers, load-failed,
probe-timeout, probe-failed, …), never as a hang or a traceback: memory is
checked before loading, an out-of-memory while loading is caught, and the probe
runs under a deadline. Loading and the probe report :class:`core.progress.Progress`
and stop at the next layer or forward step once the cancel token is set.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch

from core.doctor.capability import (
    STATUS_ABORTED,
    STATUS_FAILED,
    STATUS_PASSED,
    BackendInfo,
    CapabilityReport,
    ModelInfo,
    RecipeInfo,
    ShardInfo,
    save_report,
)
from core.doctor.hardware import DEFAULT_KV_TOKENS, HardwareInfo, detect_hardware, tensor_shapes
from core.doctor.hardware import suggest_layer_range as _suggest
from core.doctor.hardware_report import recipe_footprint
from core.doctor.probe import Deadline, ProbeOutcome, ProbePlan, run_probe
from core.doctor.serving_check import REASON_SERVING_FAILED, serving_problem
from core.errors import Cancelled, ConfigError, MeshnetError, ProbeTimeout
from core.models.manifest import ModelManifest
from core.paths import models_dir
from core.progress import STAGE_LOAD, CancelToken, Progress, ProgressCallback, reporter
from core.recipes.catalogue import Recipe, RuntimeRecipe, load_catalogue, resolve_runtime_recipe
from core.recipes.recipe_identity import identity_block_for, recipe_digest
from core.runtime.config import ModelConfig
from core.runtime.shard import Shard

log = logging.getLogger(__name__)

DEFAULT_DEADLINE_S = 60.0

# Reason codes of a doctor outcome that did not pass (the sentence is in the diagnostics).
REASON_OUT_OF_MEMORY = "out-of-memory"
REASON_BAD_LAYERS = "bad-layers"
REASON_LOAD_FAILED = "load-failed"
REASON_PROBE_TIMEOUT = "probe-timeout"
REASON_PROBE_FAILED = "probe-failed"
REASON_SELECTION_MISMATCH = "shard-mismatch"


def out_of_memory_sentence(start: int, end: int) -> str:
    return (
        f"Not enough memory for layers {start}–{end}: choose fewer layers or raise the memory cap."
    )


@dataclass(frozen=True)
class DoctorSelection:
    """What a capability report is about: one model, one layer range."""

    model_id: str
    shard_start: int
    shard_end: int


@dataclass(frozen=True)
class ValidationResult:
    report: CapabilityReport
    outcome: ProbeOutcome | None = None

    @property
    def reason(self) -> str | None:
        """Why the report did not pass, as a code; None when it passed."""
        if self.report.passed:
            return None
        if self.report.status == STATUS_ABORTED:
            return REASON_PROBE_TIMEOUT
        if self.outcome is None:
            return REASON_SELECTION_MISMATCH
        return REASON_PROBE_FAILED


def _gb(n: int) -> str:
    return f"{n / 1e9:.1f} GB"


def _report(
    selection: DoctorSelection,
    manifest: ModelManifest,
    recipe: Recipe | RuntimeRecipe,
    device: str,
    status: str,
    diagnostics: list[str],
    **extra: Any,
) -> CapabilityReport:
    digest = recipe_digest(recipe.axes) if isinstance(recipe, RuntimeRecipe) else ""
    return CapabilityReport(
        model=ModelInfo(manifest.model_id, manifest.revision, manifest.content_digest),
        shard=ShardInfo(selection.shard_start, selection.shard_end),
        recipe=RecipeInfo(recipe.recipe_id, recipe.recipe_version, digest),
        backend=BackendInfo(recipe.backend_id, device),
        status=status,
        validated_at=time.time(),
        diagnostics=tuple(diagnostics),
        **extra,
    )


def validate_loaded_backend(
    shard: Shard,
    selection: DoctorSelection,
    recipe: RuntimeRecipe,
    manifest: ModelManifest,
    *,
    deadline_s: float = DEFAULT_DEADLINE_S,
    plan: ProbePlan | None = None,
    progress: ProgressCallback | None = None,
) -> ValidationResult:
    """Run the bounded probe through ``shard`` and judge it as a capability report.

    The probe runs on a worker thread that we wait on for at most the deadline
    (plus a little grace): a forward stuck inside one huge kernel still cannot
    hang the caller. The thread itself stops at the next step boundary. A
    :class:`Cancelled` raised by ``progress`` stops it there too and is re-raised.
    """
    device = str(shard.device)
    mismatch = _selection_problem(shard, selection, manifest)
    if mismatch is not None:
        return ValidationResult(
            _report(selection, manifest, recipe, device, STATUS_FAILED, [mismatch])
        )
    plan = plan or ProbePlan()
    deadline = Deadline(deadline_s)
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["outcome"] = run_probe(shard, plan, deadline, progress)
        except BaseException as exc:  # handed to the waiting thread, re-judged there
            box["error"] = exc

    started = time.perf_counter()
    worker = threading.Thread(target=work, name="doctor-probe", daemon=True)
    worker.start()
    worker.join(deadline_s + 5.0)
    probe_s = time.perf_counter() - started
    outcome: ProbeOutcome | None = box.get("outcome")
    error = box.get("error")
    if outcome is None:
        if isinstance(error, Cancelled) or (
            error is not None and not isinstance(error, MeshnetError)
        ):
            raise error
        sentence = (
            str(error)
            if isinstance(error, ProbeTimeout)
            else f"The test forward did not finish within {deadline_s:.0f} s. This computer "
            "is too slow for this many layers; choose fewer layers."
        )
        return ValidationResult(
            _report(
                selection,
                manifest,
                recipe,
                device,
                STATUS_ABORTED,
                [sentence],
                wall_time_s=probe_s,
                timings={"probe_s": probe_s},
            )
        )
    status = STATUS_PASSED if outcome.passed else STATUS_FAILED
    report = _report(
        selection,
        manifest,
        recipe,
        device,
        status,
        outcome.diagnostics,
        checks=tuple(outcome.checks),
        tokens_per_second=outcome.tokens_per_second,
        wall_time_s=probe_s,
        timings={"probe_s": probe_s},
        memory={"weight_bytes": shard.weight_bytes()},
    )
    log.info(
        "capability probe %s",
        status,
        extra={"model_id": selection.model_id, "tokens_per_second": outcome.tokens_per_second},
    )
    return ValidationResult(report, outcome)


def _selection_problem(
    shard: Shard, selection: DoctorSelection, manifest: ModelManifest
) -> str | None:
    if (shard.start, shard.end) != (selection.shard_start, selection.shard_end):
        return (
            f"The loaded shard holds layers {shard.start}–{shard.end}, but layers "
            f"{selection.shard_start}–{selection.shard_end} were selected; reload it."
        )
    if manifest.model_id != selection.model_id:
        return f"The loaded model is {manifest.model_id}, but {selection.model_id} was selected."
    if manifest.layer_count != shard.config.num_layers:
        return (
            f"The model manifest says {manifest.layer_count} layers but config.json says "
            f"{shard.config.num_layers}; re-import the model."
        )
    return None


# -- the whole doctor flow ---------------------------------------------------------------


@dataclass(frozen=True)
class DoctorRequest:
    model: str | None = None  # model id or folder; None = the default model
    layers: tuple[int, int] | None = None  # None = the largest range that fits
    device: str | None = None  # None = best available
    recipe_id: str | None = None  # None = the catalogue default for the device
    deadline_s: float = DEFAULT_DEADLINE_S
    kv_tokens: int = DEFAULT_KV_TOKENS
    save: bool = True
    memory_cap_bytes: int | None = None  # free memory counts as min(free, cap)
    # A fresh report to reuse (the wizard's): load its shard, skip the test forward;
    # the admission gate then judges this report against what was loaded.
    reuse_report: CapabilityReport | None = None


@dataclass
class DoctorOutcome:
    report: CapabilityReport
    hardware: HardwareInfo
    model_dir: Path
    manifest: ModelManifest
    shard: Shard | None = None  # kept loaded so `run` can serve without reloading
    runtime_recipe: RuntimeRecipe | None = None
    identity_block: dict[str, Any] | None = None
    report_path: Path | None = None
    reason: str | None = None  # why the report did not pass; None when it passed

    def release(self) -> None:
        """Drop the loaded shard and give its memory back (pause, stop, a refused start)."""
        # The reference is dropped before collecting: the CUDA cache can only give back
        # blocks no tensor holds any more.
        shard, self.shard = self.shard, None
        on_cuda = shard is not None and shard.device.type == "cuda"
        del shard
        release_memory(None, on_cuda=on_cuda)


def release_memory(shard: Shard | None, *, on_cuda: bool = False) -> None:
    """Free what a shard held: drop the reference, collect, empty the CUDA cache (also
    when ``on_cuda``: the caller dropped a CUDA shard already)."""
    on_cuda = on_cuda or (shard is not None and shard.device.type == "cuda")
    del shard
    gc.collect()
    if on_cuda or (torch.cuda.is_available() and torch.cuda.is_initialized()):
        torch.cuda.empty_cache()


def parse_layers(text: str) -> tuple[int, int]:
    """``"A:B"`` -> (A, B), end-exclusive like every range in MeshNet."""
    try:
        start_text, end_text = text.split(":")
        start, end = int(start_text), int(end_text)
    except ValueError:
        raise ConfigError(
            f"--layers {text!r} is not A:B (e.g. 0:15 for the first 15 layers)",
            reason="bad-layers",
        ) from None
    if not 0 <= start < end:
        raise ConfigError(f"--layers {text!r} must satisfy 0 <= A < B", reason="bad-layers")
    return start, end


def run_doctor(
    request: DoctorRequest,
    progress: ProgressCallback | None = None,
    cancel: CancelToken | None = None,
) -> DoctorOutcome:
    """The whole doctor flow; never raises for a verdict (see the module docstring).

    Raises :class:`Cancelled` when ``cancel`` is set during a step, and
    MeshnetError when the model cannot even be found.
    """
    from core.models.local import resolve_model  # imports the default model on first use

    report_progress = reporter(progress, cancel)
    began = time.perf_counter()
    log.info("finding the model %s", request.model or "(default)")
    model_dir = resolve_model(request.model, progress=report_progress)
    manifest = ModelManifest.load(model_dir)
    config = ModelConfig.from_folder(model_dir)
    _check(cancel, "measuring this computer")
    hardware = detect_hardware(
        request.device, disk_path=models_dir(), memory_cap_bytes=request.memory_cap_bytes
    )
    device = hardware.device.kind if request.device is None else request.device
    catalogue = load_catalogue()
    recipe = catalogue.choose(request.recipe_id, config.architecture, hardware.device.kind)
    footprint = recipe_footprint(tensor_shapes(model_dir), config, recipe)
    free = hardware.device.free_bytes
    where = "GPU memory" if hardware.device.kind == "cuda" else "memory"

    def finish(report: CapabilityReport, reason: str | None, **kwargs: Any) -> DoctorOutcome:
        total = time.perf_counter() - began
        machine = {"free_bytes": free, "disk_free_bytes": hardware.disk_free_bytes}
        report = replace(
            report,
            wall_time_s=total,
            timings={**report.timings, "total_s": total},
            memory={**machine, **report.memory},
        )
        path = save_report(report) if request.save else None
        return DoctorOutcome(
            report, hardware, model_dir, manifest, report_path=path, reason=reason, **kwargs
        )

    def abort(
        selection: DoctorSelection, reason: str, sentence: str, **extra: Any
    ) -> DoctorOutcome:
        report = _report(selection, manifest, recipe, device, STATUS_ABORTED, [sentence], **extra)
        return finish(report, reason)

    reused = request.reuse_report
    layers = request.layers
    if layers is None and reused is not None:
        layers = (reused.shard.start, reused.shard.end)
    held = manifest.held_layers  # a pull of some layers holds only their weights
    if layers is None and held != (0, config.num_layers):
        layers = held
    layers = layers or _suggest(footprint, free, request.kv_tokens)
    if layers is None:
        need = footprint.needed_bytes(0, 1, request.kv_tokens)
        return abort(
            DoctorSelection(manifest.model_id, 0, 1),
            REASON_OUT_OF_MEMORY,
            f"Not enough {where}: even one layer of this model needs {_gb(need)}, {_gb(free)} "
            "is free. Close other programs, raise the memory cap or choose a smaller model.",
        )
    start, end = layers
    selection = DoctorSelection(manifest.model_id, start, end)
    if end > config.num_layers:
        return abort(
            selection,
            REASON_BAD_LAYERS,
            f"This model has {config.num_layers} layers, so layers {start}–{end} do not exist. "
            f"Choose a range within 0:{config.num_layers}.",
        )
    if not held[0] <= start < end <= held[1]:
        return abort(
            selection,
            REASON_BAD_LAYERS,
            f"This folder holds only layers {held[0]}–{held[1]} of the model, so it cannot "
            f"serve layers {start}–{end}. Choose a range within {held[0]}:{held[1]}, or pull "
            "those layers with `meshnet-node models pull`.",
        )
    need = footprint.needed_bytes(start, end, request.kv_tokens)
    weights = footprint.weight_bytes(start, end)
    memory = {"needed_bytes": need, "free_bytes": free, "weight_bytes": weights}
    if need > free:
        return abort(
            selection,
            REASON_OUT_OF_MEMORY,
            f"Not enough {where}: this range needs {_gb(need)}, {_gb(free)} is free. "
            "Choose fewer layers.",
            memory=memory,
        )

    loading = f"Loading layers {start}–{end} of {manifest.model_id} ({recipe.recipe_id})…"
    report_progress(Progress(STAGE_LOAD, 0, end - start, loading))
    load_began = time.perf_counter()
    try:
        shard = Shard.load(
            model_dir,
            start,
            end,
            compute_dtype=recipe.compute_dtype,
            kv_dtype=recipe.kv_dtype,
            weight_quantization=recipe.weight_quantization,
            device=device,
            on_layer=lambda done, total: report_progress(
                Progress(STAGE_LOAD, done, total, loading)
            ),
        )
        runtime = resolve_runtime_recipe(recipe, shard, model_dir, catalogue.catalogue_version)
    except Cancelled:
        release_memory(None)  # the half-built shard is unreachable now; collect it
        raise
    except (MemoryError, torch.OutOfMemoryError):  # the CPU's, and a GPU's (a RuntimeError)
        release_memory(None)
        return abort(
            selection, REASON_OUT_OF_MEMORY, out_of_memory_sentence(start, end), memory=memory
        )
    except MeshnetError as exc:
        return abort(
            selection,
            exc.reason or REASON_LOAD_FAILED,
            f"The model could not be loaded: {exc}",
            memory=memory,
        )
    except RuntimeError as exc:  # any other torch failure while loading
        if _is_out_of_memory(exc):
            release_memory(None)
            return abort(
                selection, REASON_OUT_OF_MEMORY, out_of_memory_sentence(start, end), memory=memory
            )
        return abort(
            selection,
            REASON_LOAD_FAILED,
            f"The model could not be loaded on {device}: {exc}. Update the GPU driver or run "
            "on the CPU.",
            memory=memory,
        )
    load_s = time.perf_counter() - load_began
    block = identity_block_for(manifest, model_dir, runtime.identity_fields(), start, end)
    loaded = {"shard": shard, "runtime_recipe": runtime, "identity_block": block}
    if reused is not None:
        # The gate judges the reused report against what was just loaded; nothing is saved.
        return DoctorOutcome(
            reused,
            hardware,
            model_dir,
            manifest,
            reason=None if reused.passed else "not-passed",
            **loaded,  # type: ignore[arg-type]
        )
    _check(cancel, "starting the test forward")
    try:
        result = validate_loaded_backend(
            shard,
            selection,
            runtime,
            manifest,
            deadline_s=request.deadline_s,
            progress=report_progress,
        )
    except Cancelled:
        del shard, loaded
        release_memory(None)
        raise
    report = replace(
        result.report,
        memory={**memory, **result.report.memory},
        timings={**result.report.timings, "load_s": load_s},
    )
    reason = result.reason
    if report.passed:  # "Passed" means the node can serve: its data plane starts too
        _check(cancel, "starting the data plane once")
        problem = serving_problem(shard, block, model_dir)
        if problem is not None:
            report = replace(report, status=STATUS_FAILED, diagnostics=(problem,))
            reason = REASON_SERVING_FAILED
    return finish(report, reason, **loaded)


def _check(cancel: CancelToken | None, where: str) -> None:
    if cancel is not None:
        cancel.check(where)


def _is_out_of_memory(exc: BaseException) -> bool:
    """torch raises some allocation failures as a plain RuntimeError with this text."""
    text = str(exc).lower()
    return "out of memory" in text or "failed to allocate" in text
