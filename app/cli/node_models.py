"""`meshnet-node models import-default | list`."""

from __future__ import annotations

import argparse
import json

from app.cli.node_control import add_control_argument, cancel_on_stop, stdin_controls
from app.cli.node_doctor import ProgressPrinter
from core.models.default_model import DEFAULT_MODEL_ID, ensure_default_model
from core.models.local import list_local_models
from core.progress import CancelToken, reporter


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
    verbs.add_parser("list", help="local models, sizes and digests").set_defaults(func=list_models)


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


def list_models(_args: argparse.Namespace) -> int:
    models = list_local_models()
    if not models:
        print("No models yet. Run `meshnet-node models import-default`.")
        return 0
    print(f"{'MODEL':32} {'LAYERS':>6} {'SIZE':>10}  {'DIGEST':16}  FOLDER")
    for model in models:
        size = f"{model.size_bytes / 1e6:.1f} MB"
        digest = model.manifest.content_digest[:16]
        layers = model.manifest.layer_count
        print(f"{model.model_id:32} {layers:>6} {size:>10}  {digest}  {model.folder}")
    return 0
