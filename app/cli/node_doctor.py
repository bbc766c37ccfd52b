"""`meshnet-node doctor` — prove this machine can serve a layer range of a model.

With ``--json`` stdout is exactly one JSON document, the report, and stderr
carries the progress as NodeEvent JSON lines (kind "progress"), the line
``{"kind": "report-saved", "data": {"path": ...}}`` (the path the wizard
hands to ``run --report``) and last ``{"kind": "result", "reason": code or
null, "message": sentence, "data": {"passed", "status"}}``. Exit status: 0
passed, 1 not passed, 2 error.
"""

from __future__ import annotations

import argparse
import json
import sys

from app.cli import arguments
from app.cli.node_control import add_control_argument, cancel_on_stop, stdin_controls
from core.doctor.capability import CapabilityReport
from core.doctor.checkup import DEFAULT_DEADLINE_S, DoctorRequest, run_doctor
from core.events import KIND_PROGRESS, NodeEvent
from core.identity.keystore import DEFAULT_PROFILE
from core.progress import CancelToken, Progress


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    doctor = subparsers.add_parser(
        "doctor", help="find the hardware, pick layers that fit, prove them with a real forward"
    )
    doctor.add_argument(
        "--model", default=None, help="model id or folder (default: the default model)"
    )
    doctor.add_argument(
        "--layers",
        type=arguments.layers,
        default=None,
        metavar="A:B",
        help="serve layers A..B-1 (default: the largest range that fits)",
    )
    doctor.add_argument("--device", default=None, help="cpu, cuda or mps (default: the best found)")
    doctor.add_argument(
        "--recipe",
        default=None,
        type=arguments.recipe,
        help="recipe id (default: best for the device)",
    )
    doctor.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        help="node profile (a report proves the hardware, so profiles share it)",
    )
    doctor.add_argument(
        "--deadline",
        type=float,
        default=DEFAULT_DEADLINE_S,
        metavar="SECONDS",
        help="give up on the test forward after this long",
    )
    doctor.add_argument(
        "--memory-cap-mb",
        type=arguments.megabytes,
        default=None,
        metavar="N",
        help="use at most N MB: free memory counts as min(free, N)",
    )
    doctor.add_argument(
        "--json",
        action="store_true",
        help="print only the report as JSON; progress goes to stderr as JSON lines",
    )
    add_control_argument(doctor)
    doctor.set_defaults(func=doctor_command)


class ProgressPrinter:
    """Progress on stderr: NodeEvent JSON lines for an app, a line per step for people."""

    def __init__(self, as_json: bool) -> None:
        self._json = as_json
        self._last: tuple[str, str] | None = None

    def __call__(self, progress: Progress) -> None:
        if self._json:
            event = NodeEvent(KIND_PROGRESS, progress.message, data=progress.data())
            print(json.dumps(event.to_dict()), file=sys.stderr, flush=True)
        elif (progress.stage, progress.message) != self._last:
            self._last = (progress.stage, progress.message)
            print(progress.message, file=sys.stderr, flush=True)


def doctor_command(args: argparse.Namespace) -> int:
    request = DoctorRequest(
        model=args.model,
        layers=args.layers,
        device=args.device,
        recipe_id=args.recipe,
        deadline_s=args.deadline,
        memory_cap_bytes=None if args.memory_cap_mb is None else args.memory_cap_mb * 1024**2,
    )
    stop = CancelToken()
    cancel_on_stop(stop, stdin_control=stdin_controls(args))
    outcome = run_doctor(request, progress=ProgressPrinter(args.json), cancel=stop)
    if args.json:
        if outcome.report_path is not None:
            saved = {"kind": "report-saved", "data": {"path": str(outcome.report_path)}}
            print(json.dumps(saved), file=sys.stderr, flush=True)
        report = outcome.report
        result = {
            "kind": "result",
            "reason": outcome.reason,
            "message": " ".join(report.diagnostics) if not report.passed else "passed",
            "data": {"passed": report.passed, "status": report.status},
        }
        print(json.dumps(result), file=sys.stderr, flush=True)
        print(json.dumps(report.to_dict(), indent=2), flush=True)
    else:
        device = outcome.hardware.device
        print(f"Device: {device.kind} ({device.name}), {device.free_bytes / 1e9:.1f} GB free")
        print(render_table(outcome.report))
        if outcome.report_path is not None:
            print(f"\nReport saved to {outcome.report_path}")
    return 0 if outcome.report.passed else 1


def render_table(report: CapabilityReport) -> str:
    gb = 1e9
    rows = [
        ("Result", "PASSED" if report.passed else report.status.upper()),
        ("Model", f"{report.model.model_id} ({report.model.revision})"),
        ("Layers", f"{report.shard.start}–{report.shard.end}"),
        ("Recipe", f"{report.recipe.recipe_id} v{report.recipe.recipe_version}"),
        ("Backend", f"{report.backend.backend_id} on {report.backend.device}"),
    ]
    if "needed_bytes" in report.memory:
        rows.append(
            (
                "Memory",
                f"needs {report.memory['needed_bytes'] / gb:.1f} GB, "
                f"{report.memory['free_bytes'] / gb:.1f} GB free",
            )
        )
    if report.tokens_per_second is not None:
        rows.append(("Speed", f"{report.tokens_per_second:.1f} tokens/s through these layers"))
    if "disk_free_bytes" in report.memory:
        rows.append(("Disk", f"{report.memory['disk_free_bytes'] / gb:.1f} GB free for models"))
    rows.append(("Time", f"{report.wall_time_s:.1f} s"))
    rows += [
        (f"Check: {c.name}", ("ok   " if c.passed else "FAIL ") + c.detail) for c in report.checks
    ]
    width = max(len(name) for name, _ in rows)
    lines = [f"{name:<{width}}  {value}" for name, value in rows]
    lines += [f"\n! {sentence}" for sentence in report.diagnostics]
    return "\n".join(lines)
