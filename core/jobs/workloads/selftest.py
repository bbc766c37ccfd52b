"""selftest: an operator's check of a fleet, no model needed.

Writes ``inputs.json`` (every input file with its size and SHA-256, unpacked
folders walked), sleeps ``seconds`` in one-second steps (``step_seconds``),
writes ``ckpt/step-N.json`` after each step when ``checkpoint=1`` and resumes
from ``inputs/resume.json`` when an earlier attempt left one. ``print_env=1``
writes the environment it was given to ``env.json``; ``fail=MESSAGE`` exits 3
with that message on stderr (to check failure reporting).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from core.jobs.workloads.common import TaskSpec, read_spec, write_json


def _describe(path: Path) -> list[dict[str, Any]]:
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    base = path.parent if path.is_file() else path
    return [
        {
            "path": p.relative_to(base).as_posix(),
            "size": p.stat().st_size,
            "sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
        }
        for p in files
    ]


def main(spec: TaskSpec) -> int:
    if spec.text("fail"):
        print(f"selftest asked to fail: {spec.text('fail')}", file=sys.stderr)
        return 3
    if spec.flag("print_env"):
        write_json(spec.out / "env.json", dict(os.environ))
    write_json(spec.out / "inputs.json", {n: _describe(p) for n, p in spec.inputs.items()})
    steps = int(spec.number("seconds", 0))
    step_s = spec.number("step_seconds", 1.0)
    start = 0
    resume = spec.inputs.get("resume")
    if resume is not None and resume.is_file():
        start = int(json.loads(resume.read_text()).get("step", 0))
    for step in range(start + 1, steps + 1):
        time.sleep(step_s)
        if spec.flag("checkpoint"):
            write_json(spec.out / "ckpt" / f"step-{step}.json", {"step": step})
    write_json(
        spec.out / "metrics.json",
        {
            "workload": "selftest",
            "task_id": spec.task_id,
            "task_index": spec.task_index,
            "resumed_from": start,
            "steps_run": max(0, steps - start),
            "steps_total": steps,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(read_spec()))
