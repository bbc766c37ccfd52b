"""Fail-closed admission: no registration without a fresh proof of exactly this selection.

This module does not produce proof — the doctor does, with a bounded real
forward through the loaded shard. It decides whether a proof covers what is
about to be advertised, and node start-up calls it immediately before it
registers with the tracker (:func:`admit_for_start`).

A capability report proves one combination: model, shard range, recipe, backend
and device. A report that failed, aged out, or describes anything else is
refused here, and the node never registers an endpoint. Identity fields are
opaque labels that are compared, never interpreted; nothing here branches on a
model, vendor or kernel name.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.doctor.capability import CapabilityReport
from core.doctor.checkup import DoctorSelection
from core.errors import CapabilityAdmissionError, MeshnetError
from core.models.manifest import ModelManifest
from core.recipes.catalogue import RuntimeRecipe

log = logging.getLogger(__name__)

# How long a passing report stays usable. Start-up normally validates in-process
# (age ~ 0); this bounds how far a report from an earlier `doctor` run can be
# carried forward, after which drivers, hardware or weights may have moved.
DEFAULT_MAX_REPORT_AGE_SECONDS = 900.0
# A report timestamped further than this in the future is not fresh, it is wrong.
MAX_CLOCK_SKEW_SECONDS = 60.0

REASON_NO_REPORT = "no-report"
REASON_NOT_PASSED = "not-passed"
REASON_STALE = "stale"
REASON_MODEL_MISMATCH = "model-mismatch"
REASON_SHARD_MISMATCH = "shard-mismatch"
REASON_RECIPE_MISMATCH = "recipe-mismatch"
REASON_BACKEND_MISMATCH = "backend-mismatch"


@dataclass(frozen=True)
class CapabilityContext:
    """What is about to be advertised, and the loaded backend that would serve it."""

    backend: Any  # core.runtime.shard.Shard (kept opaque: the gate never touches it)
    selection: DoctorSelection
    recipe: RuntimeRecipe
    manifest: ModelManifest
    device: str


# Turns a context into the report the gate then judges. Production uses
# `probe_capability`; tests pass an explicit validator instead of this module
# growing a lenient mode.
CapabilityValidator = Callable[[CapabilityContext], CapabilityReport]


@dataclass(frozen=True)
class AdmissionRequirement:
    """The one capability a report must prove for this node to register."""

    model_id: str
    shard_start: int
    shard_end: int
    recipe_id: str
    recipe_version: str
    backend_id: str
    device: str
    max_age_seconds: float = DEFAULT_MAX_REPORT_AGE_SECONDS
    # The bytes and the recipe digest that will be advertised; when set, a report
    # must name the same ones (an empty one in the report proves neither).
    content_digest: str = ""
    runtime_recipe_digest: str = ""

    @classmethod
    def for_context(
        cls,
        context: CapabilityContext,
        *,
        max_age_seconds: float = DEFAULT_MAX_REPORT_AGE_SECONDS,
    ) -> AdmissionRequirement:
        return cls(
            model_id=context.selection.model_id,
            shard_start=context.selection.shard_start,
            shard_end=context.selection.shard_end,
            recipe_id=context.recipe.recipe_id,
            recipe_version=context.recipe.recipe_version,
            backend_id=context.recipe.backend_id,
            device=context.device,
            max_age_seconds=max_age_seconds,
        )

    @property
    def shard_label(self) -> str:
        return f"layers {self.shard_start}–{self.shard_end}"


def admit(
    requirement: AdmissionRequirement,
    report: CapabilityReport | None,
    *,
    now: float | None = None,
) -> CapabilityReport:
    """Return ``report`` if it admits ``requirement``; otherwise raise.

    Selection is checked first, so the operator hears that a report is about the
    wrong thing before hearing that it failed or is old.
    """
    if report is None:
        raise CapabilityAdmissionError(
            REASON_NO_REPORT,
            f"no capability report for {requirement.model_id} {requirement.shard_label}: "
            "this node has not proven it can serve it; run `meshnet-node doctor`",
        )
    if report.model.model_id != requirement.model_id:
        raise _mismatch(REASON_MODEL_MISMATCH, "model", report.model.model_id, requirement.model_id)
    if requirement.content_digest and report.model.content_digest != requirement.content_digest:
        raise _mismatch(
            REASON_MODEL_MISMATCH,
            "model",
            f"content digest {_short(report.model.content_digest)}",
            f"content digest {_short(requirement.content_digest)}",
        )
    if (report.shard.start, report.shard.end) != (requirement.shard_start, requirement.shard_end):
        raise _mismatch(
            REASON_SHARD_MISMATCH,
            "shard",
            f"layers {report.shard.start}–{report.shard.end}",
            requirement.shard_label,
        )
    if (report.recipe.recipe_id, report.recipe.recipe_version) != (
        requirement.recipe_id,
        requirement.recipe_version,
    ):
        raise _mismatch(
            REASON_RECIPE_MISMATCH,
            "recipe",
            f"{report.recipe.recipe_id} (v{report.recipe.recipe_version})",
            f"{requirement.recipe_id} (v{requirement.recipe_version})",
        )
    wanted = requirement.runtime_recipe_digest
    if wanted and report.recipe.runtime_recipe_digest != wanted:
        raise _mismatch(
            REASON_RECIPE_MISMATCH,
            "recipe",
            f"recipe digest {_short(report.recipe.runtime_recipe_digest)}",
            f"recipe digest {_short(wanted)}",
        )
    if (report.backend.backend_id, report.backend.device) != (
        requirement.backend_id,
        requirement.device,
    ):
        raise _mismatch(
            REASON_BACKEND_MISMATCH,
            "backend",
            f"{report.backend.backend_id} on {report.backend.device}",
            f"{requirement.backend_id} on {requirement.device}",
        )
    if not report.passed:
        raise CapabilityAdmissionError(
            REASON_NOT_PASSED,
            f"capability validation {report.status} for {requirement.model_id} "
            f"{requirement.shard_label} with recipe {requirement.recipe_id}"
            + _diagnostics_suffix(report),
        )
    now = time.time() if now is None else now
    age = now - report.validated_at
    if age > requirement.max_age_seconds:
        raise CapabilityAdmissionError(
            REASON_STALE,
            f"capability report for {requirement.model_id} {requirement.shard_label} "
            f"is {age / 60:.0f} min old (limit {requirement.max_age_seconds / 60:.0f} min); "
            "re-run `meshnet-node doctor`",
        )
    if age < -MAX_CLOCK_SKEW_SECONDS:
        raise CapabilityAdmissionError(
            REASON_STALE,
            f"capability report for {requirement.model_id} {requirement.shard_label} "
            f"is timestamped {-age:.0f}s in the future; check this computer's clock",
        )
    return report


def _mismatch(
    reason: str, field_name: str, reported: str, required: str
) -> CapabilityAdmissionError:
    return CapabilityAdmissionError(
        reason,
        f"capability report proves a different {field_name}: it validated {reported}, "
        f"but this node would serve {required}. A report is only proof for the exact "
        "combination it ran; re-run `meshnet-node doctor` for this one.",
    )


def _short(digest: str) -> str:
    return f"{digest[:12]}…" if digest else "(none stated)"


def _diagnostics_suffix(report: CapabilityReport) -> str:
    if not report.diagnostics:
        return ""
    return " — " + " ".join(report.diagnostics)


def probe_capability(context: CapabilityContext) -> CapabilityReport:
    """Production validator: one bounded real forward through the loaded shard."""
    from core.doctor.checkup import validate_loaded_backend

    return validate_loaded_backend(
        context.backend, context.selection, context.recipe, context.manifest
    ).report


def admit_for_start(
    context: CapabilityContext,
    validator: CapabilityValidator = probe_capability,
    now: float | None = None,
) -> CapabilityReport:
    """Validate in-process, then judge: the last step before registering.

    A validator that cannot even run is a refusal too (fail closed); the error
    keeps its sentence and takes the not-passed reason code.
    """
    requirement = AdmissionRequirement.for_context(context)
    try:
        report = validator(context)
    except CapabilityAdmissionError:
        raise
    except MeshnetError as exc:
        raise CapabilityAdmissionError(
            REASON_NOT_PASSED,
            f"capability validation could not run for {requirement.model_id} "
            f"{requirement.shard_label}: {exc}",
        ) from exc
    try:
        admitted = admit(requirement, report, now=now)
    except CapabilityAdmissionError as exc:
        log.warning("admission refused", extra={"reason": exc.reason, "detail": exc.message})
        raise
    log.info(
        "admission granted",
        extra={"model_id": requirement.model_id, "shard": requirement.shard_label},
    )
    return admitted
