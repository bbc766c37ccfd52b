"""Does the capability report prove what the identity block is about to advertise?

The node's own admission gate already refused to register without a fresh,
passing report for exactly this selection. The tracker checks again, because
what reaches it is the node's claim, and this is the independent check: the
same gate, in the seed's order and with the seed's reasons (no report → model
→ shard → recipe → backend and device → passed → too old → from the future).
Selection comes first so an operator hears that a report is about the wrong
thing before hearing that it failed or is old. A report proves one exact
combination; it admits nothing else.

The device: the node advertises the class of device it serves on
(``device_class``: ``cpu``, ``cuda`` or ``mps``), and the report must have been
made on a device of that class (``cuda:0`` is of class ``cuda``), as the node's
gate holds the report to the device it is about to serve on. A report made on a
device of no known class proves nothing about the one advertised.
"""

from __future__ import annotations

import re

from tracker_service import errors
from tracker_service.domain.capability_report import CapabilityReportIn
from tracker_service.domain.recipe_identity import PresentedIdentity

# The seed's default: a report older than this may no longer describe the
# hardware, drivers or weights. The operator may set another limit.
DEFAULT_MAX_REPORT_AGE_S = 900.0
# A report timestamped this far in the future is not fresh, it is wrong.
MAX_CLOCK_SKEW_S = 60.0
STATUS_PASSED = "passed"
# The device classes a node can serve on (the node's core.runtime.dtypes.DEVICES).
DEVICE_CLASSES = ("cpu", "cuda", "mps")


_DEVICE_NAME = re.compile(r"^([a-z]+)(?::[0-9]+)?$")


def device_class_of(device: str) -> str:
    """``cuda:7`` -> ``cuda``: the class of a torch device name ("" if it is not one)."""
    match = _DEVICE_NAME.match(device)
    return match.group(1) if match else ""


def check_capability(
    report: CapabilityReportIn | None,
    identity: PresentedIdentity,
    *,
    now: float,
    device_class: str | None,
    max_age_s: float = DEFAULT_MAX_REPORT_AGE_S,
) -> None:
    """Raise TrackerRefusal (422) naming the first way `report` does not cover `identity`
    on a device of ``device_class`` (the class the registration advertises)."""
    where = f"layers {identity.shard_start}–{identity.shard_end} of {identity.artifact_id}"
    if report is None:
        raise _refuse(
            errors.CAPABILITY_NO_REPORT,
            f"no capability report for {where}: the node has not proven it can serve it; "
            "run `meshnet-node doctor` and register with its report",
        )
    _check_model(report, identity)
    if (report.shard.start, report.shard.end) != (identity.shard_start, identity.shard_end):
        raise _mismatch(
            errors.CAPABILITY_SHARD_MISMATCH,
            "shard",
            f"layers {report.shard.start}–{report.shard.end}",
            f"layers {identity.shard_start}–{identity.shard_end}",
        )
    _check_recipe(report, identity)
    _check_backend(report, identity, device_class)
    _check_passed(report, where)
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
            f"the capability report for {where} is timestamped {-age:.0f}s in the future; "
            "check the node's clock",
        )


def _check_model(report: CapabilityReportIn, identity: PresentedIdentity) -> None:
    """The report's model against the presented artifact: its id and its bytes."""
    if report.model.model_id != identity.artifact_id:
        raise _mismatch(
            errors.CAPABILITY_MODEL_MISMATCH,
            "model",
            report.model.model_id,
            identity.artifact_id,
        )
    digest = report.model.content_digest
    if digest != identity.content_digest:
        raise _mismatch(
            errors.CAPABILITY_MODEL_MISMATCH,
            "model",
            f"{identity.artifact_id} with content digest {_short(digest)}",
            f"content digest {_short(identity.content_digest)}",
        )


def _check_recipe(report: CapabilityReportIn, identity: PresentedIdentity) -> None:
    """Recipe id, version and digest: always all three (a report without a digest proves none)."""
    if (report.recipe.recipe_id, report.recipe.recipe_version) != (
        identity.recipe_id,
        identity.recipe_version,
    ):
        raise _mismatch(
            errors.CAPABILITY_RECIPE_MISMATCH,
            "recipe",
            f"{report.recipe.recipe_id} (v{report.recipe.recipe_version})",
            f"{identity.recipe_id} (v{identity.recipe_version})",
        )
    claimed = report.recipe.runtime_recipe_digest
    if claimed != identity.runtime_recipe_digest:
        raise _mismatch(
            errors.CAPABILITY_RECIPE_MISMATCH,
            "recipe",
            f"recipe digest {_short(claimed)}",
            f"recipe digest {_short(identity.runtime_recipe_digest)} (derived from its axes)",
        )


def _check_backend(
    report: CapabilityReportIn, identity: PresentedIdentity, device_class: str | None
) -> None:
    """The backend id of the recipe, on a device of the advertised class."""
    backend_id = str(identity.axes["backend_id"])
    device = report.backend.device
    proven = f"{report.backend.backend_id} on {device.strip() or 'no device'}"
    if device_class not in DEVICE_CLASSES:
        stated = f"device class {device_class!r}" if device_class else "no device class"
        raise _refuse(
            errors.CAPABILITY_BACKEND_MISMATCH,
            f"the registration advertises {stated}; name the class of device the node serves "
            f"on in `device_class` ({', '.join(DEVICE_CLASSES)}), as the capability report "
            "is checked against it",
        )
    if report.backend.backend_id != backend_id or device_class_of(device) != device_class:
        raise _mismatch(
            errors.CAPABILITY_BACKEND_MISMATCH,
            "backend",
            proven,
            f"{backend_id} on a {device_class} device",
        )


def _check_passed(report: CapabilityReportIn, where: str) -> None:
    """Passed is read from ``status``; a ``passed`` flag that disagrees was edited."""
    if report.status != STATUS_PASSED or report.passed is False:
        suffix = (" — " + " ".join(report.diagnostics)) if report.diagnostics else ""
        raise _refuse(
            errors.CAPABILITY_NOT_PASSED,
            f"capability validation {report.status} for {where}; the node must pass "
            f"`meshnet-node doctor` before registering{suffix}",
        )


def _short(digest: str) -> str:
    return f"{digest[:12]}…" if digest else "(none stated)"


def _mismatch(reason: str, field_name: str, reported: str, required: str) -> errors.TrackerRefusal:
    return _refuse(
        reason,
        f"the capability report proves a different {field_name}: it validated {reported}, "
        f"but the identity advertises {required}. A report is only proof for the exact "
        "combination it ran; re-run `meshnet-node doctor` for this one.",
    )


def _refuse(reason: str, message: str) -> errors.TrackerRefusal:
    return errors.TrackerRefusal(reason, message, status_code=422)
