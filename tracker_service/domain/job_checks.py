"""When two executors' results for one task agree: the rule a job check applies.

Pure functions, no store. A checked task runs on two independent executors and
their ``metrics.json`` are compared under the workload's declared tolerance:
the same keys, strings and booleans equal, numbers within ``abs_tol`` or
``rel_tol`` of each other, keys in ``ignore`` skipped (they describe how a run
went, such as where it resumed, not what it computed). Two results that are not
JSON agree only when their bytes do. ``docs/jobs.md`` states the same rule.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Tolerance:
    abs_tol: float = 0.0
    rel_tol: float = 0.0
    ignore: frozenset[str] = field(default_factory=frozenset)


EXACT = Tolerance()

# Each allow-listed workload's declared tolerance (the node's ``core/jobs/workloads``).
# Model workloads run on different GPUs and kernels, so their floats differ a little.
WORKLOAD_TOLERANCE: Mapping[str, Tolerance] = {
    "selftest": Tolerance(ignore=frozenset({"resumed_from", "steps_run"})),
    "perplexity": Tolerance(abs_tol=1e-3, rel_tol=1e-2),
    "batch_generate": Tolerance(rel_tol=0.05),
}


def tolerance_for(workload: str) -> Tolerance:
    """An unknown workload is compared exactly."""
    return WORKLOAD_TOLERANCE.get(workload, EXACT)


def _numbers_agree(a: float, b: float, tol: Tolerance) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=tol.rel_tol, abs_tol=tol.abs_tol)


def values_agree(a: Any, b: Any, tol: Tolerance, *, top: bool = False) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return _numbers_agree(float(a), float(b), tol)
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        skip = tol.ignore if top else frozenset()
        keys_a, keys_b = set(a) - skip, set(b) - skip
        if keys_a != keys_b:
            return False
        return all(values_agree(a[k], b[k], tol) for k in keys_a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(values_agree(x, y, tol) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


@dataclass(frozen=True)
class Result:
    """One executor's result for a task: its metrics' digest and parsed JSON (None if not JSON)."""

    key: int
    sha256: str
    metrics: Any


def results_agree(a: Result, b: Result, tol: Tolerance) -> bool:
    if a.metrics is None or b.metrics is None:
        return a.metrics is None and b.metrics is None and a.sha256 == b.sha256
    return values_agree(a.metrics, b.metrics, tol, top=True)


def agreeing_pair(results: Sequence[Result], tol: Tolerance) -> tuple[Result, Result] | None:
    """The first two results that agree, or None."""
    for i, a in enumerate(results):
        for b in results[i + 1 :]:
            if results_agree(a, b, tol):
                return a, b
    return None
