"""`meshnet-node models import-default | list`."""

from __future__ import annotations

import argparse
import sys

from core.models.default_model import ensure_default_model
from core.models.local import list_local_models


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    models = subparsers.add_parser("models", help="models on this machine")
    verbs = models.add_subparsers(dest="models_command", required=True)
    verbs.add_parser(
        "import-default", help="import the packaged default model (SmolLM2-135M-Instruct)"
    ).set_defaults(func=import_default)
    verbs.add_parser("list", help="local models, sizes and digests").set_defaults(func=list_models)


def import_default(_args: argparse.Namespace) -> int:
    def progress(stage: str, fraction: float) -> None:
        print(f"[{fraction:4.0%}] {stage}", file=sys.stderr)

    print(ensure_default_model(progress=progress))
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
