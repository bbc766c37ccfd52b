"""What start-up reads to decide admission: a reused report, and how a report reads.

``meshnet-node run --report PATH`` reuses the doctor wizard's fresh report
instead of running a second test forward; the shard is still loaded, and the
gate judges the saved report against what was loaded. A report is proof only
for the bytes and the recipe it ran, so the requirement carries the loaded
model's content digest and runtime recipe digest, and the gate compares them
with the names in the seed's order: model, shard, recipe, backend, passed, age.
"""

from __future__ import annotations

import json
from pathlib import Path

from core.doctor.admission_gate import REASON_NO_REPORT, AdmissionRequirement
from core.doctor.capability import CapabilityReport
from core.doctor.checkup import DoctorOutcome
from core.errors import CapabilityAdmissionError, DoctorError
from core.node.settings import NodeSettings


def load_reused_report(path: Path) -> CapabilityReport:
    """The saved report at ``path``; an unreadable one is a refusal (no proof)."""
    try:
        return CapabilityReport.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
    except (OSError, ValueError, DoctorError) as exc:
        raise CapabilityAdmissionError(
            REASON_NO_REPORT,
            f"the capability report {path} cannot be used ({exc}); run the doctor again",
        ) from exc


def advertised_requirement(
    settings: NodeSettings, outcome: DoctorOutcome, device: str
) -> AdmissionRequirement:
    """What the report must prove, built from what will be advertised, never from the report.

    The range and recipe come from the operator's settings where they name one,
    else from the identity block the node will register with; the model and its
    bytes from the manifest; the digest from the block's fingerprint. Built from
    the report itself, every mismatch check would compare the report with itself.
    """
    block = outcome.identity_block
    if block is None:
        raise CapabilityAdmissionError(
            REASON_NO_REPORT, "the shard did not load, so there is nothing proven to advertise"
        )
    recipe = block["recipe"]
    start, end = settings.layers or (int(block["shard_start"]), int(block["shard_end"]))
    return AdmissionRequirement(
        model_id=outcome.manifest.model_id,
        shard_start=start,
        shard_end=end,
        recipe_id=settings.recipe_id or str(recipe["recipe_id"]),
        recipe_version=str(recipe["recipe_version"]),
        backend_id=str(recipe["backend_id"]),
        device=device,
        max_age_seconds=settings.report_max_age_s,
        content_digest=outcome.manifest.content_digest,
        runtime_recipe_digest=str(block["fingerprint"]["runtime_recipe_digest"]),
    )


def capability_sentence(report: CapabilityReport) -> str:
    if report.passed:
        rate = f"{report.tokens_per_second:.1f} tokens/s" if report.tokens_per_second else ""
        return (
            f"a real forward through layers {report.shard.start}–{report.shard.end} passed {rate}"
        ).rstrip()
    return " ".join(report.diagnostics) or f"capability check {report.status}"
