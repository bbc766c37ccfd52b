"""`meshnet demo` (the whole network on one machine) and `meshnet chat` (a gateway client)."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from app.cli import chat
from core.errors import MeshnetError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="meshnet", description="MeshNet on this machine.")
    subparsers = parser.add_subparsers(dest="command", required=True)
    demo = subparsers.add_parser(
        "demo", help="start a tracker and nodes here, certify the model, stream an answer"
    )
    demo.add_argument("--nodes", type=int, choices=(2, 3), default=2)
    demo.add_argument("--prompt", default="What is the capital of France?")
    demo.add_argument("--max-tokens", type=int, default=64)
    demo.add_argument(
        "--recipe",
        default="fp32",
        help="recipe the nodes run: fp32 (default), int8 (int8 weights), or a catalogue id",
    )
    demo.add_argument("--keep", action="store_true", help="keep the demo's folder and logs")
    demo.add_argument(
        "--serve", action="store_true", help="keep the network serving after the answer (Ctrl-C)"
    )
    demo.set_defaults(func=run_demo)
    chat.add_parser(subparsers)
    return parser


def run_demo(args: argparse.Namespace) -> int:
    from app.demo.runner import Demo, DemoOptions

    if args.max_tokens < 1:
        print("meshnet: --max-tokens must be at least 1", file=sys.stderr)
        return 2
    options = DemoOptions(
        nodes=args.nodes,
        prompt=args.prompt,
        max_tokens=args.max_tokens,
        keep_workdir=args.keep,
        serve=args.serve,
        recipe=args.recipe,
    )
    return Demo(options).run()


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    try:
        return int(args.func(args))
    except MeshnetError as exc:
        print(f"\nmeshnet: {exc} [{exc.reason}]", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nmeshnet: stopped.", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
