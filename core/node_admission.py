"""What start-up reads to decide admission: a reused report, and how a report reads.

``meshnet-node run --report PATH`` reuses the doctor wizard's fresh report
instead of running a second test forward; the shard is still loaded, and the
gate judges the saved report against what was loaded. A report is proof only
for the bytes and the recipe it ran, so the digests are compared as well as
the names (the gate itself compares model, range, recipe and backend).
"""

from __future__ import annotations

import json
from pathlib import Path

from core.admission import (
    REASON_MODEL_MISMATCH,
    REASON_NO_REPORT,
    REASON_RECIPE_MISMATCH,
    CapabilityAdmissionError,
)
from core.capability import CapabilityReport
from core.doctor import DoctorOutcome
from core.errors import DoctorError


def load_reused_report(path: Path) -> CapabilityReport:
    """The saved report at ``path``; an unreadable one is a refusal (no proof)."""
    try:
        return CapabilityReport.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
    except (OSError, ValueError, DoctorError) as exc:
        raise CapabilityAdmissionError(
            REASON_NO_REPORT,
            f"the capability report {path} cannot be used ({exc}); run the doctor again",
        ) from exc


def check_reused_digests(report: CapabilityReport, outcome: DoctorOutcome) -> None:
    """A reused report must be about these bytes and this recipe, not just these names."""
    digest = report.model.content_digest
    if digest and digest != outcome.manifest.content_digest:
        raise CapabilityAdmissionError(
            REASON_MODEL_MISMATCH,
            "the saved capability report was made with other model files than the ones "
            "loaded now; run the doctor again",
        )
    proven = report.recipe.runtime_recipe_digest
    if proven and outcome.identity_block is not None:
        loaded = outcome.identity_block["fingerprint"]["runtime_recipe_digest"]
        if proven != loaded:
            raise CapabilityAdmissionError(
                REASON_RECIPE_MISMATCH,
                "the saved capability report was made with another runtime recipe than the "
                "one loaded now; run the doctor again",
            )


def capability_sentence(report: CapabilityReport) -> str:
    if report.passed:
        rate = f"{report.tokens_per_second:.1f} tokens/s" if report.tokens_per_second else ""
        return (
            f"a real forward through layers {report.shard.start}–{report.shard.end} passed {rate}"
        ).rstrip()
    return " ".join(report.diagnostics) or f"capability check {report.status}"
