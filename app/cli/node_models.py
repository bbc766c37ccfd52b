"""`meshnet-node models import-default | import-gguf PATH | pull REPO_ID | list`."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from app.cli import arguments
from app.cli.node_control import add_control_argument, cancel_on_stop, stdin_controls
from app.cli.node_doctor import ProgressPrinter
from core.models.default_model import DEFAULT_MODEL_ID, ensure_default_model
from core.models.gguf_import import import_gguf
from core.models.hub_pull import pull_model
from core.models.local import LocalModel, list_local_models
from core.paths import models_dir
from core.progress import CancelToken, reporter

_MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    models = subparsers.add_parser("models", help="models on this machine")
    verbs = models.add_subparsers(dest="models_command", required=True)
    import_default_parser = verbs.add_parser(
        "import-default", help="import the packaged default model (SmolLM2-135M-Instruct)"
    )
    import_default_parser.add_argument(
        "--json",
        action="store_true",
        help='progress as JSON lines on stderr; {"path", "model_id"} on stdout',
    )
    add_control_argument(import_default_parser)
    import_default_parser.set_defaults(func=import_default)
    import_gguf_parser = verbs.add_parser(
        "import-gguf",
        help="import a GGUF file (Llama, Qwen 2/3, Gemma 2/3; F32 to Q4_K) as a local model",
    )
    import_gguf_parser.add_argument("path", help="the .gguf file")
    import_gguf_parser.add_argument(
        "--name", default=None, help="the local model id (default: the file's name, lowercased)"
    )
    import_gguf_parser.add_argument(
        "--unpack",
        action="store_true",
        help="write the weights as float32 safetensors (4-8x the file's size) instead of "
        "keeping the GGUF: a folder any safetensors reader, transformers among them, loads",
    )
    import_gguf_parser.add_argument(
        "--json",
        action="store_true",
        help='progress as JSON lines on stderr; {"path", "model_id"} on stdout',
    )
    add_control_argument(import_gguf_parser)
    import_gguf_parser.set_defaults(func=import_gguf_file)
    _register_pull(verbs)
    verbs.add_parser("list", help="local models, sizes and digests").set_defaults(func=list_models)


def _register_pull(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pull = verbs.add_parser(
        "pull",
        help="download a Hugging Face model, or only the files some layers need, "
        "pinned to one commit",
    )
    pull.add_argument("repo_id", metavar="REPO_ID", help="the Hub repository, ORG/NAME")
    pull.add_argument(
        "--revision",
        default="main",
        help="branch, tag or commit (default: main); the files come from the commit it names",
    )
    pull.add_argument(
        "--layers",
        type=arguments.layers,
        default=None,
        metavar="A:B",
        help="only the files layers A..B-1 need, with the embedding for 0 and the head for "
        "the last (default: the whole model)",
    )
    pull.add_argument(
        "--name", default=None, help="the local model id (default: org--name, lowercased)"
    )
    pull.add_argument(
        "--json",
        action="store_true",
        help='progress as JSON lines on stderr; {"path", "model_id", "revision", "layers"} '
        "on stdout",
    )
    add_control_argument(pull)
    pull.set_defaults(func=pull_hub_model)


def import_default(args: argparse.Namespace) -> int:
    """Import once (staged, then renamed: a killed import leaves no half model)."""
    as_json = bool(getattr(args, "json", False))
    stop = CancelToken()
    cancel_on_stop(stop, stdin_control=stdin_controls(args))
    folder = ensure_default_model(progress=reporter(ProgressPrinter(as_json), stop))
    if as_json:
        print(json.dumps({"path": str(folder), "model_id": DEFAULT_MODEL_ID}), flush=True)
    else:
        print(folder)
    return 0


def import_gguf_file(args: argparse.Namespace) -> int:
    """Import into the models folder under ``--name`` (staged, then renamed)."""
    source = Path(args.path).expanduser()
    if not source.is_file():
        print(f"meshnet-node: no GGUF file at {source}", file=sys.stderr)
        return 2
    model_id = args.name or gguf_model_id(source)
    if not _MODEL_ID.fullmatch(model_id):
        print(
            f"meshnet-node: --name {model_id!r} must be letters, digits, '.', '_' or '-'",
            file=sys.stderr,
        )
        return 2
    as_json = bool(args.json)
    stop = CancelToken()
    cancel_on_stop(stop, stdin_control=stdin_controls(args))
    folder = import_gguf(
        source,
        models_dir() / model_id,
        model_id=model_id,
        progress=reporter(ProgressPrinter(as_json), stop),
        label=model_id,
        unpack=bool(args.unpack),
    )
    if as_json:
        print(json.dumps({"path": str(folder), "model_id": model_id}), flush=True)
    else:
        print(folder)
    return 0


def pull_hub_model(args: argparse.Namespace) -> int:
    """Pull into the models folder (staged, then renamed); HF_ENDPOINT names a Hub mirror."""
    as_json = bool(args.json)
    stop = CancelToken()
    cancel_on_stop(stop, stdin_control=stdin_controls(args))
    model = pull_model(
        args.repo_id,
        revision=args.revision,
        layers=args.layers,
        model_id=args.name,
        endpoint=(os.environ.get("HF_ENDPOINT") or "").rstrip("/") or None,
        progress=reporter(ProgressPrinter(as_json), stop),
    )
    start, end = model.manifest.held_layers
    if as_json:
        result = {
            "path": str(model.folder),
            "model_id": model.model_id,
            "revision": model.manifest.revision,
            "layers": [start, end],
        }
        print(json.dumps(result), flush=True)
    else:
        print(model.folder)
        print(
            f"Serve it with: meshnet-node run --model {model.model_id} --layers {start}:{end}",
            file=sys.stderr,
        )
    return 0


def gguf_model_id(path: Path) -> str:
    """``Gemma-3-270M-Q4_K_M.gguf`` -> ``gemma-3-270m-q4_k_m``."""
    return re.sub(r"[^a-z0-9._-]+", "-", path.stem.lower()).strip("-.") or "gguf-model"


def list_models(_args: argparse.Namespace) -> int:
    models = list_local_models()
    if not models:
        print("No models yet. Run `meshnet-node models import-default`.")
        return 0
    print(f"{'MODEL':32} {'LAYERS':>9} {'SIZE':>10}  {'DIGEST':16}  FOLDER")
    for model in models:
        size = f"{model.size_bytes / 1e6:.1f} MB"
        digest = model.manifest.content_digest[:16]
        print(f"{model.model_id:32} {held_layers(model):>9} {size:>10}  {digest}  {model.folder}")
    return 0


def held_layers(model: LocalModel) -> str:
    """``30``, or ``0:12/30`` for a pull of some layers only."""
    count = model.manifest.layer_count
    start, end = model.manifest.held_layers
    return str(count) if (start, end) == (0, count) else f"{start}:{end}/{count}"
