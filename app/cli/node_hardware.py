"""`meshnet-node hardware` — this machine, and the layers of a model it could serve.

The doctor wizard runs ``hardware --json`` first: it needs the device, the
memory and a suggested layer range before anything is imported or loaded.
"""

from __future__ import annotations

import argparse
import json

from app.cli import arguments
from core.doctor.hardware_report import hardware_report


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    hardware = subparsers.add_parser(
        "hardware", help="the device, memory and disk found, and the layers that would fit"
    )
    hardware.add_argument("--model", default=None, help="model id or folder (default: SmolLM2)")
    hardware.add_argument("--device", default=None, help="cpu, cuda or mps (default: best found)")
    hardware.add_argument(
        "--memory-cap-mb",
        type=arguments.megabytes,
        default=None,
        metavar="N",
        help="use at most N MB",
    )
    hardware.add_argument("--json", action="store_true", help="print one JSON document")
    hardware.set_defaults(func=hardware_command)


def hardware_command(args: argparse.Namespace) -> int:
    cap = None if args.memory_cap_mb is None else args.memory_cap_mb * 1024**2
    report = hardware_report(args.model, args.device, cap)
    if args.json:
        print(json.dumps(report, indent=2), flush=True)
        return 0
    device = report["device"]
    gb = 1e9
    print(f"Device:  {device['kind']} ({device['name']}), {device['free_bytes'] / gb:.1f} GB free")
    print(f"Memory:  {report['ram_available_bytes'] / gb:.1f} GB of "
          f"{report['ram_total_bytes'] / gb:.1f} GB available")  # fmt: skip
    print(f"Disk:    {report['disk_free_bytes'] / gb:.1f} GB free for models")
    print(f"CPUs:    {report['cpu_count']}")
    print(report["suggestion"])
    return 0
