"""`meshnet-node`: the node's command line (models, identity, doctor, run).

Each subcommand lives in its own module exposing ``register(subparsers)``;
this file only dispatches and turns MeshnetError into a sentence and exit 2.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import sys
from collections.abc import Sequence

from core import __version__
from core.errors import MeshnetError

_SUBCOMMAND_MODULES = (
    "app.cli.node_models",
    "app.cli.node_hardware",
    "app.cli.node_identity",
    "app.cli.node_doctor",
    "app.cli.node_run",
    "app.cli.node_join",
    "app.cli.node_jobs",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="meshnet-node", description="Run a MeshNet node.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log details to stderr")
    parser.add_argument("--version", action="version", version=f"meshnet-node {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for name in _SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue  # a subcommand not built yet
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        return int(args.func(args))
    except MeshnetError as exc:
        if getattr(args, "json", False):  # an app reads stderr's JSON lines: say it there too
            error = {"kind": "error", "reason": exc.reason, "message": str(exc), "data": {}}
            print(json.dumps(error), file=sys.stderr, flush=True)
        print(f"meshnet-node: {exc} [{exc.reason}]", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
