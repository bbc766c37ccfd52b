"""`meshnet demo` (the whole network on one machine), `meshnet chat` (a gateway client)
and `meshnet generate` (a whole model in this process)."""

from __future__ import annotations

import argparse
import json
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
        help="recipe the nodes run: fp32 (default), int8 (int8 weights), q4 (4-bit weights), "
        "or a catalogue id",
    )
    demo.add_argument(
        "--model",
        default=None,
        help="a local model id or folder (e.g. one from `meshnet-node models import-gguf`); "
        "default: the packaged SmolLM2-135M-Instruct",
    )
    demo.add_argument(
        "--memory-cap-mb",
        type=int,
        default=None,
        metavar="MB",
        help="give each node at most MB of memory for the model and let the tracker choose "
        "its layers (below the whole model's size: no node holds all of it)",
    )
    demo.add_argument("--keep", action="store_true", help="keep the demo's folder and logs")
    demo.add_argument(
        "--serve", action="store_true", help="keep the network serving after the answer (Ctrl-C)"
    )
    demo.set_defaults(func=run_demo)
    chat.add_parser(subparsers)
    generate = subparsers.add_parser(
        "generate", help="generate from a local model in this process (greedy), no network"
    )
    generate.add_argument("--model", default=None, help="model folder or local model id")
    generate.add_argument("--prompt", required=True)
    generate.add_argument("--max-tokens", type=int, default=32)
    generate.add_argument(
        "--recipe", default=None, help="fp32 (default), bf16, int8, q4, or a catalogue recipe id"
    )
    generate.add_argument(
        "--chat", action="store_true", help="wrap the prompt in the chat template"
    )
    generate.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    generate.add_argument("--json", action="store_true", help="print token ids and text as JSON")
    generate.set_defaults(func=run_generate)
    return parser


def run_generate(args: argparse.Namespace) -> int:
    from core.one_process_generate import generate

    result = generate(
        args.model,
        args.prompt,
        args.max_tokens,
        recipe=args.recipe,
        chat=args.chat,
        device=args.device,
    )
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
    else:
        print(result.text)
    return 0


def run_demo(args: argparse.Namespace) -> int:
    from app.demo.runner import Demo, DemoOptions

    if args.max_tokens < 1:
        print("meshnet: --max-tokens must be at least 1", file=sys.stderr)
        return 2
    if args.memory_cap_mb is not None and args.memory_cap_mb < 1:
        print("meshnet: --memory-cap-mb must be at least 1 (megabytes per node)", file=sys.stderr)
        return 2
    options = DemoOptions(
        nodes=args.nodes,
        prompt=args.prompt,
        max_tokens=args.max_tokens,
        keep_workdir=args.keep,
        serve=args.serve,
        recipe=args.recipe,
        model=args.model,
        memory_cap_mb=args.memory_cap_mb,
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
