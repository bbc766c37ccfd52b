"""The capability report: what one doctor run proved, for exactly which combination.

A report names the model, the shard range, the recipe and the backend/device it
ran on; admission (core.doctor.admission_gate) accepts it only for that same combination
and only while it is fresh. Reports are plain JSON under the user data folder so
the GUI, the CLI and the node read the same file.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import DoctorError
from core.paths import reports_dir

log = logging.getLogger(__name__)

REPORT_SCHEMA_VERSION = 1
STATUS_PASSED = "passed"
STATUS_FAILED = "failed"  # the probe ran and a check did not hold
STATUS_ABORTED = "aborted"  # the probe could not finish (memory, deadline, load error)
STATUSES = (STATUS_PASSED, STATUS_FAILED, STATUS_ABORTED)


@dataclass(frozen=True)
class ModelInfo:
    model_id: str
    revision: str = ""
    content_digest: str = ""


@dataclass(frozen=True)
class ShardInfo:
    start: int
    end: int


@dataclass(frozen=True)
class RecipeInfo:
    recipe_id: str
    recipe_version: str
    runtime_recipe_digest: str = ""


@dataclass(frozen=True)
class BackendInfo:
    backend_id: str
    device: str


@dataclass(frozen=True)
class CheckResult:
    """One thing the probe verified, with what it saw."""

    name: str
    passed: bool
    detail: str


@dataclass(frozen=True)
class CapabilityReport:
    model: ModelInfo
    shard: ShardInfo
    recipe: RecipeInfo
    backend: BackendInfo
    status: str
    validated_at: float
    diagnostics: tuple[str, ...] = ()
    checks: tuple[CheckResult, ...] = ()
    tokens_per_second: float | None = None
    wall_time_s: float = 0.0
    memory: Mapping[str, int] = field(default_factory=dict)  # bytes: needed, free, weights
    timings: Mapping[str, float] = field(default_factory=dict)  # seconds: load, probe

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise DoctorError(
                f"capability report status {self.status!r} is not one of {STATUSES}",
                reason="bad-report",
            )

    @property
    def passed(self) -> bool:
        return self.status == STATUS_PASSED

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": REPORT_SCHEMA_VERSION,
            "model": {
                "model_id": self.model.model_id,
                "revision": self.model.revision,
                "content_digest": self.model.content_digest,
            },
            "shard": {"start": self.shard.start, "end": self.shard.end},
            "recipe": {
                "recipe_id": self.recipe.recipe_id,
                "recipe_version": self.recipe.recipe_version,
                "runtime_recipe_digest": self.recipe.runtime_recipe_digest,
            },
            "backend": {"backend_id": self.backend.backend_id, "device": self.backend.device},
            "status": self.status,
            "passed": self.passed,
            "diagnostics": list(self.diagnostics),
            "checks": [
                {"name": c.name, "passed": c.passed, "detail": c.detail} for c in self.checks
            ],
            "validated_at": self.validated_at,
            "tokens_per_second": self.tokens_per_second,
            "wall_time_s": self.wall_time_s,
            "memory": dict(self.memory),
            "timings": dict(self.timings),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CapabilityReport:
        """Parse a saved report; anything malformed raises DoctorError."""
        try:
            if data["schema_version"] != REPORT_SCHEMA_VERSION:
                raise DoctorError(
                    f"capability report schema {data['schema_version']!r} is not "
                    f"{REPORT_SCHEMA_VERSION}; re-run `meshnet-node doctor`",
                    reason="bad-report",
                )
            tps = data.get("tokens_per_second")
            report = cls(
                model=ModelInfo(
                    model_id=str(data["model"]["model_id"]),
                    revision=str(data["model"].get("revision", "")),
                    content_digest=str(data["model"].get("content_digest", "")),
                ),
                shard=ShardInfo(start=int(data["shard"]["start"]), end=int(data["shard"]["end"])),
                recipe=RecipeInfo(
                    recipe_id=str(data["recipe"]["recipe_id"]),
                    recipe_version=str(data["recipe"]["recipe_version"]),
                    runtime_recipe_digest=str(data["recipe"].get("runtime_recipe_digest", "")),
                ),
                backend=BackendInfo(
                    backend_id=str(data["backend"]["backend_id"]),
                    device=str(data["backend"]["device"]),
                ),
                status=str(data["status"]),
                validated_at=float(data["validated_at"]),
                diagnostics=tuple(str(d) for d in data.get("diagnostics", ())),
                checks=tuple(
                    CheckResult(str(c["name"]), bool(c["passed"]), str(c["detail"]))
                    for c in data.get("checks", ())
                ),
                tokens_per_second=None if tps is None else float(tps),
                wall_time_s=float(data.get("wall_time_s", 0.0)),
                memory={str(k): int(v) for k, v in dict(data.get("memory") or {}).items()},
                timings={str(k): float(v) for k, v in dict(data.get("timings") or {}).items()},
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise DoctorError(
                f"capability report is malformed ({exc!r}); re-run `meshnet-node doctor`",
                reason="bad-report",
            ) from exc
        # "passed" is derived from status; a file where they disagree was edited.
        if "passed" in data and bool(data["passed"]) != report.passed:
            raise DoctorError(
                "capability report says passed but its status is not 'passed'; "
                "re-run `meshnet-node doctor`",
                reason="bad-report",
            )
        return report


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def report_path(
    model_id: str, start: int, end: int, recipe_id: str, directory: Path | None = None
) -> Path:
    folder = reports_dir() if directory is None else directory
    return folder / f"{_slug(model_id)}__{start}-{end}__{_slug(recipe_id)}.json"


def save_report(report: CapabilityReport, directory: Path | None = None) -> Path:
    path = report_path(
        report.model.model_id,
        report.shard.start,
        report.shard.end,
        report.recipe.recipe_id,
        directory,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(report.to_dict(), indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)  # readers never see half a report
    return path


def saved_reports(model_id: str, recipe_id: str, directory: Path | None = None) -> list[Path]:
    """Every saved report of this model and recipe, whatever its range."""
    folder = reports_dir() if directory is None else directory
    return sorted(folder.glob(f"{_slug(model_id)}__*__{_slug(recipe_id)}.json"))


def load_report(
    model_id: str, start: int, end: int, recipe_id: str, directory: Path | None = None
) -> CapabilityReport | None:
    """The saved report for this combination; None when absent or unreadable (no proof)."""
    path = report_path(model_id, start, end, recipe_id, directory)
    if not path.is_file():
        return None
    try:
        return CapabilityReport.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, json.JSONDecodeError, DoctorError) as exc:
        log.warning(
            "ignoring unreadable capability report", extra={"path": str(path), "error": str(exc)}
        )
        return None
