"""Models already on this machine: list them, resolve a name to a folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.errors import ModelError
from core.models.default_model import DEFAULT_MODEL_ID, ensure_default_model
from core.models.manifest import MANIFEST_NAME, ModelManifest
from core.paths import models_dir
from core.progress import ProgressCallback


@dataclass(frozen=True)
class LocalModel:
    model_id: str
    folder: Path
    manifest: ModelManifest

    @property
    def size_bytes(self) -> int:
        return self.manifest.total_bytes


def list_local_models(root: Path | None = None) -> list[LocalModel]:
    """Complete model folders only; a half-written import has no manifest and is skipped."""
    base = Path(root or models_dir())
    found: list[LocalModel] = []
    for manifest_path in sorted(base.glob(f"*/{MANIFEST_NAME}")):
        folder = manifest_path.parent
        if folder.name.startswith("."):
            continue  # an import or pull being staged
        try:
            manifest = ModelManifest.load(folder)
        except ModelError:
            continue
        found.append(LocalModel(manifest.model_id, folder, manifest))
    return found


def resolve_model(
    model: str | None, root: Path | None = None, progress: ProgressCallback | None = None
) -> Path:
    """A model id or folder path to its folder; None means the default model.

    The default model is imported on first use; ``progress`` hears that import.
    """
    if model is None or model == DEFAULT_MODEL_ID:
        return ensure_default_model(root, progress)
    candidate = Path(model).expanduser()
    if (candidate / MANIFEST_NAME).is_file():
        return candidate
    for local in list_local_models(root):
        if local.model_id == model:
            return local.folder
    raise ModelError(
        f"model {model!r} is not on this machine; run `meshnet-node models list` to see "
        "what is, or fetch it first",
        reason="model-not-found",
    )
