"""Proving the shard: the doctor's real forward, the admission gate, and proving again.

A node may advertise a shard only with a fresh passing report of exactly what
it loaded. At start-up ``examine`` loads the shard and runs a bounded real
forward (or, on the first start with ``--report``, judges the wizard's saved
report against what was loaded) and ``admit`` puts the report through the gate.
While serving, ``reprove`` runs a fresh probe through the already loaded shard
and the gate judges that one, so a long-serving node's report never ages out
and a report the tracker refused as stale is replaced before it is sent again.

The prover holds what the proof is about (the doctor's outcome, with the
loaded shard) and the admitted report. It publishes the capability and
admission gates; the lifecycle (core.node.lifecycle) sets the node's state
around each step and decides when to prove.
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
import time
from collections.abc import Callable
from typing import Protocol

from core.doctor.admission_gate import (
    REASON_NOT_PASSED,
    CapabilityContext,
    CapabilityValidator,
    admit,
)
from core.doctor.capability import CapabilityReport
from core.doctor.checkup import (
    DoctorOutcome,
    DoctorRequest,
    DoctorSelection,
    validate_loaded_backend,
)
from core.errors import Cancelled, CapabilityAdmissionError, MeshnetError
from core.events import Gate, GateState
from core.node.admission import (
    advertised_requirement,
    capability_sentence,
    load_reused_report,
)
from core.node.hooks import GateFn
from core.node.settings import NodeSettings
from core.progress import CancelToken, Progress, ProgressCallback

# A report is proven again once it is this fraction of the binding age limit old.
REPROVE_AT_FRACTION = 0.5


class Doctor(Protocol):
    def __call__(
        self,
        request: DoctorRequest,
        progress: Callable[[Progress], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> DoctorOutcome: ...


class ShardProver:
    def __init__(
        self,
        settings: NodeSettings,
        *,
        doctor: Doctor,
        validator: CapabilityValidator | None,
        gate: GateFn,
        progress: ProgressCallback,
        cancel: CancelToken,
    ) -> None:
        self._settings = settings
        self._doctor = doctor
        # None: judge the report the doctor just produced in-process (a real forward).
        self._validator = validator
        self._gate = gate
        self._progress = progress
        self._cancel = cancel  # the lifecycle's: a stop or pause interrupts the doctor
        self._reused_report_once = False
        self.outcome: DoctorOutcome | None = None  # the loaded shard and what it was loaded as
        self.report: CapabilityReport | None = None  # the admitted report

    def report_to_reuse(self) -> CapabilityReport | None:
        """The saved report of ``--report``, on the first start only (resume proves afresh)."""
        path = self._settings.report_path
        if path is None or self._reused_report_once:
            return None
        self._reused_report_once = True
        return load_reused_report(path)

    def examine(
        self, layers: tuple[int, int] | None, reuse: CapabilityReport | None
    ) -> DoctorOutcome:
        """Load ``layers`` and run the doctor (or take ``reuse``); publish its verdict."""
        settings = self._settings
        outcome = self._doctor(
            DoctorRequest(
                model=settings.model,
                layers=layers,
                device=settings.device,
                recipe_id=settings.recipe_id,
                memory_cap_bytes=_mb(settings.memory_cap_mb),
                reuse_report=reuse,
                save=reuse is None,
            ),
            progress=self._progress,
            cancel=self._cancel,
        )
        self.outcome, report = outcome, outcome.report
        self._gate(
            Gate.CAPABILITY,
            GateState.PASSED if report.passed else GateState.FAILED,
            capability_sentence(report),
            None if report.passed else (outcome.reason or report.status),
            report=report.to_dict(),
        )
        return outcome

    def admit(self, *, reused: bool = False) -> CapabilityReport:
        """The admission gate on what :meth:`examine` produced; raises when it refuses."""
        outcome = self.outcome
        assert outcome is not None
        self.report = self._admit(outcome, reused=reused)
        self._gate(Gate.ADMISSION, GateState.PASSED, "the capability report covers this shard")
        return self.report

    def _admit(self, outcome: DoctorOutcome, *, reused: bool) -> CapabilityReport:
        report = outcome.report
        if outcome.shard is None or outcome.runtime_recipe is None:
            # The doctor could not even load the shard: refuse with its reason and sentence.
            raise CapabilityAdmissionError(
                outcome.reason or REASON_NOT_PASSED,
                " ".join(report.diagnostics) or f"capability check {report.status}",
            )
        context = _context(outcome)
        if reused:
            # The gate compares model (and its bytes), shard, recipe (and its digest), then
            # backend, in the seed's order: a reused report gets no earlier check of its own.
            validator: CapabilityValidator = lambda _ctx: report  # noqa: E731
        else:
            validator = self._validator or (lambda _ctx: report)
        try:
            fresh = validator(context)
        except (CapabilityAdmissionError, Cancelled):
            raise
        except MeshnetError as exc:  # a validator that cannot run refuses (fail closed)
            raise CapabilityAdmissionError(
                REASON_NOT_PASSED, f"capability validation could not run: {exc}"
            ) from exc
        if not reused and not fresh.passed and outcome.reason and self._validator is None:
            # A failed proof is the gate's not-passed; the doctor's own reason stays in the detail.
            raise CapabilityAdmissionError(
                REASON_NOT_PASSED, f"{capability_sentence(fresh)} [doctor: {outcome.reason}]"
            )
        return admit(advertised_requirement(self._settings, outcome, context.device), fresh)

    def reprove(self) -> None:
        """A fresh probe through the loaded shard, judged by the gate (before re-registering)."""
        outcome = self.outcome
        assert outcome is not None
        context = _context(outcome)
        if self._validator is not None:
            report = self._validator(context)
        else:
            report = validate_loaded_backend(
                context.backend,
                context.selection,
                context.recipe,
                context.manifest,
                progress=self._progress,
            ).report
        self._gate(
            Gate.CAPABILITY,
            GateState.PASSED if report.passed else GateState.FAILED,
            capability_sentence(report),
            None if report.passed else report.status,
            report=report.to_dict(),
        )
        self.report = admit(advertised_requirement(self._settings, outcome, context.device), report)
        self._gate(Gate.ADMISSION, GateState.PASSED, "a fresh capability report covers this shard")

    def is_stale(self, max_age_s: float, now: float | None = None) -> bool:
        """Is the report due to be proven again? Past half ``max_age_s`` it is, so a
        report the node sends is always well inside the tracker's limit."""
        if self.report is None:
            return True
        age = (time.time() if now is None else now) - self.report.validated_at
        return age >= max_age_s * REPROVE_AT_FRACTION

    def release(self) -> None:
        """Drop the loaded shard (its memory goes back) and the report proven on it."""
        outcome, self.outcome = self.outcome, None
        if outcome is not None:
            outcome.release()
            del outcome
            _trim_heap()
        self.report = None


def _trim_heap() -> None:
    """Give the C heap's freed pages back to the system: glibc keeps freed memory for
    the process's next allocations, so without this a paused node still holds about
    half of a CPU shard's bytes (docs/churn.md#one-pause-two-models)."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):  # not glibc: musl has no malloc_trim
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _context(outcome: DoctorOutcome) -> CapabilityContext:
    assert outcome.shard is not None and outcome.runtime_recipe is not None
    return CapabilityContext(
        backend=outcome.shard,
        selection=DoctorSelection(
            outcome.manifest.model_id, outcome.shard.start, outcome.shard.end
        ),
        recipe=outcome.runtime_recipe,
        manifest=outcome.manifest,
        device=str(outcome.shard.device),
    )


def _mb(value: int | None) -> int | None:
    return None if value is None else int(value) * 1024 * 1024
