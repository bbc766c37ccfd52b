"""What every workload shares: its command line, spec.json, params and output files.

Params arrive as JSON values or, from ``meshnet-tracker jobs submit --param K=V``,
as strings; the helpers here read both.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class TaskSpec:
    task_id: str
    task_index: int
    params: Mapping[str, Any]
    inputs: Mapping[str, Path]
    out: Path

    def number(self, name: str, default: float) -> float:
        value = self.params.get(name, default)
        try:
            return float(value)
        except (TypeError, ValueError):
            raise SystemExit(f"param {name}={value!r} is not a number") from None

    def flag(self, name: str) -> bool:
        return str(self.params.get(name, "")).lower() in ("1", "true", "yes", "on")

    def text(self, name: str, default: str | None = None) -> str | None:
        value = self.params.get(name, default)
        return None if value is None else str(value)


def read_spec(argv: Sequence[str] | None = None) -> TaskSpec:
    parser = argparse.ArgumentParser()
    parser.add_argument("--spec", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args(argv)
    data = json.loads(args.spec.read_text())
    args.out.mkdir(parents=True, exist_ok=True)
    return TaskSpec(
        task_id=str(data.get("task_id", "")),
        task_index=int(data.get("task_index", 0)),
        params=dict(data.get("params") or {}),
        inputs={k: Path(v) for k, v in (data.get("inputs") or {}).items()},
        out=args.out,
    )


def write_json(path: Path, value: Any) -> None:
    """Write atomically: a reader (the checkpoint relay) never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(value, indent=2, sort_keys=True))
    os.replace(tmp, path)
