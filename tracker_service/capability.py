"""Does the capability report prove what the identity block is about to advertise?

The node's own admission gate already refused to register without a fresh,
passing report for exactly this shard and recipe. The tracker checks again,
because it is the node's claim: a report that failed, or that proves another
range or recipe, admits nothing.
"""

from __future__ import annotations

from tracker_service import errors
from tracker_service.recipe_identity import PresentedIdentity
from tracker_service.schemas.nodes import CapabilityReportIn

# A report this far in the future is not fresh, it is wrong.
MAX_CLOCK_SKEW_S = 60.0


def check_capability(
    report: CapabilityReportIn, identity: PresentedIdentity, *, now: float, max_age_s: float
) -> None:
    """Raise TrackerRefusal (422) naming the first way `report` does not cover `identity`."""
    where = f"layers {identity.shard_start}–{identity.shard_end} of {identity.artifact_id}"
    if not report.passed:
        suffix = (" — " + " ".join(report.diagnostics)) if report.diagnostics else ""
        raise _refuse(
            errors.CAPABILITY_NOT_PASSED,
            f"capability validation {report.status} for {where}; the node must pass "
            f"`meshnet-node doctor` before registering{suffix}",
        )
    if (report.shard.start, report.shard.end) != (identity.shard_start, identity.shard_end):
        raise _refuse(
            errors.CAPABILITY_MISMATCH,
            f"the capability report proves layers {report.shard.start}–{report.shard.end}, "
            f"but the identity advertises {identity.shard_start}–{identity.shard_end}",
        )
    if (report.recipe.recipe_id, report.recipe.recipe_version) != (
        identity.recipe_id,
        identity.recipe_version,
    ):
        raise _refuse(
            errors.CAPABILITY_MISMATCH,
            f"the capability report proves recipe {report.recipe.recipe_id} "
            f"(v{report.recipe.recipe_version}), but the identity advertises "
            f"{identity.recipe_id} (v{identity.recipe_version})",
        )
    claimed = (report.recipe.model_extra or {}).get("runtime_recipe_digest")
    if claimed is not None and claimed != identity.runtime_recipe_digest:
        raise _refuse(
            errors.CAPABILITY_MISMATCH,
            f"the capability report was measured under recipe digest {str(claimed)[:12]}…, "
            f"but the identity's axes derive {identity.runtime_recipe_digest[:12]}…",
        )
    if report.backend.backend_id != identity.axes["backend_id"]:
        raise _refuse(
            errors.CAPABILITY_MISMATCH,
            f"the capability report ran backend {report.backend.backend_id}, but the "
            f"recipe names backend {identity.axes['backend_id']}",
        )
    age = now - report.validated_at
    if age > max_age_s:
        raise _refuse(
            errors.CAPABILITY_STALE,
            f"the capability report for {where} is {age / 60:.0f} min old (limit "
            f"{max_age_s / 60:.0f} min); re-run `meshnet-node doctor`",
        )
    if age < -MAX_CLOCK_SKEW_S:
        raise _refuse(
            errors.CAPABILITY_STALE,
            f"the capability report is timestamped {-age:.0f}s in the future; "
            "check the node's clock",
        )


def _refuse(reason: str, message: str) -> errors.TrackerRefusal:
    return errors.TrackerRefusal(reason, message, status_code=422)
