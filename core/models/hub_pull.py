"""A Hub repository, or the part some layers need, into this machine's models folder.

``meshnet-node models pull ORG/NAME [--revision REV] [--layers A:B]``: the
revision is resolved once to its commit and everything is downloaded at that
commit. Files gather in a staging folder beside the models (``.ID.pull``) and
the finished folder is renamed into place, so ``models list`` and ``run``
never see half a model; a pull that stops leaves its finished files there for
the next try. A folder that already holds the commit and the layers asked for
is kept as it is; one of the same commit with other layers lends its files
(hard links), so only what is new crosses the network.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from pathlib import Path

from core.errors import ConfigError, ModelError
from core.models.default_model import DEFAULT_MODEL_ID
from core.models.hub import fetch_shard
from core.models.hub_client import hub_downloader, resolve_revision
from core.models.local import LocalModel
from core.models.manifest import MANIFEST_NAME, ModelManifest
from core.paths import models_dir
from core.progress import STAGE_FETCH, Progress, ProgressCallback

log = logging.getLogger(__name__)

MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def hub_model_id(repo_id: str) -> str:
    """``HuggingFaceTB/SmolLM2-135M`` -> ``huggingfacetb--smollm2-135m``.

    A Hub id never holds "--", so two repositories never get the same local id.
    """
    local = re.sub(r"[^a-z0-9._-]+", "-", repo_id.lower().replace("/", "--")).strip("-.")
    return local[:128] or "hub-model"


def pull_model(
    repo_id: str,
    *,
    revision: str = "main",
    layers: tuple[int, int] | None = None,
    model_id: str | None = None,
    root: Path | None = None,
    endpoint: str | None = None,
    progress: ProgressCallback | None = None,
) -> LocalModel:
    """Pull ``repo_id`` at ``revision`` (layers [A, B) only when ``layers`` is given)."""
    model_id = model_id or hub_model_id(repo_id)
    if not MODEL_ID.fullmatch(model_id) or model_id == DEFAULT_MODEL_ID:
        raise ConfigError(
            f"{model_id!r} cannot name a pulled model: use letters, digits, '.', '_' or '-', "
            f"and not {DEFAULT_MODEL_ID!r} (the packaged default model)",
            reason="bad-model-id",
        )
    base = Path(root or models_dir())
    destination = base / model_id
    existing = _existing(destination)
    if existing is not None and existing.source.get("repo") != repo_id:
        raise ConfigError(
            f"a model named {model_id!r} is already on this machine and did not come from "
            f"{repo_id}: choose another --name, or delete {destination} first",
            reason="model-exists",
        )
    if progress is not None:
        progress(Progress(STAGE_FETCH, 0, 0, f"Looking up {repo_id} at {revision}…"))
    hub = resolve_revision(repo_id, revision, endpoint=endpoint)
    start, end = layers if layers is not None else (0, None)
    if existing is not None and _covers(existing, hub.commit, start, end):
        if progress is not None:
            first, last = existing.held_layers
            said = f"Layers {first}–{last} of {repo_id} at {hub.commit[:12]} are already here."
            progress(Progress(STAGE_FETCH, 1, 1, said))
        return LocalModel(model_id, destination, existing)

    staging = base / f".{model_id}.pull"
    staging.mkdir(parents=True, exist_ok=True)
    if existing is not None and existing.revision == hub.commit:
        _lend_files(destination, staging)
    fetch_shard(
        hub_downloader(repo_id, hub.commit, endpoint=endpoint, files=hub.files),
        staging,
        model_id=model_id,
        revision=hub.commit,
        start=start,
        end=end,
        progress=progress,
        sizes=hub.sizes,
        repo_id=repo_id,
        check_config=_check_config,
    )
    replaced = base / f".{model_id}.replaced"
    shutil.rmtree(replaced, ignore_errors=True)
    if destination.exists():
        os.replace(destination, replaced)
    os.replace(staging, destination)
    shutil.rmtree(replaced, ignore_errors=True)
    log.info("pulled model", extra={"model_id": model_id, "folder": str(destination)})
    return LocalModel(model_id, destination, ModelManifest.load(destination))


def _existing(folder: Path) -> ModelManifest | None:
    if not (folder / MANIFEST_NAME).is_file():
        return None
    try:
        return ModelManifest.load(folder)
    except ModelError:
        return None  # unreadable: the pull replaces it


def _covers(manifest: ModelManifest, commit: str, start: int, end: int | None) -> bool:
    first, last = manifest.held_layers
    end = manifest.layer_count if end is None else end
    return manifest.revision == commit and first <= start and end <= last


def _lend_files(folder: Path, staging: Path) -> None:
    """Hard-link the files of an earlier pull of the same commit into the staging folder;
    huggingface_hub then checks each against the Hub's hash instead of downloading it."""
    for path in folder.iterdir():
        target = staging / path.name
        if path.is_file() and path.name != MANIFEST_NAME and not target.exists():
            try:
                os.link(path, target)
            except OSError:
                continue  # no hard links here: that file is downloaded again


def _check_config(folder: Path) -> None:
    from core.runtime.config import ModelConfig

    ModelConfig.from_folder(folder)  # refuses what the runtime cannot compute, naming why
