"""An executor that does no work: every task "succeeds" with a made-up metrics.json.

``GarbageRunner`` is the runner an in-process ``ExecutorLoop`` is given;
``install()`` turns every ``SubprocessRunner`` of this process into one (for an
executor process started with ``MESHNET_TEST_LIE_MODULE="garbage_metrics"``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.jobs.runner import SubprocessRunner


def _garbage(
    self: SubprocessRunner,
    payload: Mapping[str, Any],
    workdir: Path,
    inputs: Mapping[str, Path],
    cancel: threading.Event | None = None,
) -> Path:
    outdir = workdir / "out"
    outdir.mkdir(parents=True, exist_ok=True)
    made_up = {"workload": payload.get("workload"), "task_id": payload.get("task_id"), "junk": 1}
    (outdir / "metrics.json").write_text(json.dumps(made_up))
    return outdir


class GarbageRunner(SubprocessRunner):
    run = _garbage


def install() -> None:
    SubprocessRunner.run = _garbage  # type: ignore[method-assign]
