"""Fetch just the part of a hub model a shard needs.

A node serving layers [start, end) needs the config, the tokenizer, and only
the safetensors files that hold those layers — plus the embedding file for the
first shard and the final norm / LM head for the last. The index's
``weight_map`` says which file holds which tensor. Downloads are pinned to an
exact commit, resumable (huggingface_hub keeps partial files), and report
progress per file.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from core.errors import ConfigError, ModelError
from core.models.manifest import ModelManifest
from core.progress import STAGE_FETCH, Progress, ProgressCallback

log = logging.getLogger(__name__)

INDEX_NAME = "model.safetensors.index.json"
SINGLE_FILE = "model.safetensors"
METADATA_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json")
OPTIONAL_FILES = ("generation_config.json",)
_LAYER = re.compile(r"^model\.layers\.(\d+)\.")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


class Downloader(Protocol):
    """Brings one file of the repository into ``local_dir`` and returns its path."""

    def __call__(self, filename: str, local_dir: Path) -> Path: ...


@dataclass(frozen=True)
class ShardFiles:
    weights: tuple[str, ...]
    metadata: tuple[str, ...]


def files_for_layers(
    weight_map: Mapping[str, str], start: int, end: int, layer_count: int, *, tied: bool
) -> tuple[str, ...]:
    """The weight files holding layers [start, end) and, at the ends, embedding and head."""
    if not 0 <= start < end <= layer_count:
        raise ConfigError(f"shard owns layers {start}–{end}, model has {layer_count}")
    last = end == layer_count
    needed: set[str] = set()
    for tensor, filename in weight_map.items():
        match = _LAYER.match(tensor)
        if match:
            if start <= int(match.group(1)) < end:
                needed.add(filename)
        elif tensor == "model.embed_tokens.weight":
            if start == 0 or (last and tied):
                needed.add(filename)
        elif tensor.startswith(("model.norm.", "lm_head.")) and last:
            needed.add(filename)
    return tuple(sorted(needed))


def hub_downloader(repo_id: str, revision: str) -> Downloader:
    """A downloader over huggingface_hub, pinned to one commit."""
    if not _COMMIT.match(revision):
        raise ConfigError(
            f"revision {revision!r} is not an exact commit: pin the 40-character commit hash "
            "so every node serves the same bytes"
        )

    def download(filename: str, local_dir: Path) -> Path:
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError

        try:
            return Path(
                hf_hub_download(repo_id, filename, revision=revision, local_dir=str(local_dir))
            )
        except EntryNotFoundError as exc:
            raise FileNotFoundError(filename) from exc
        except (HfHubHTTPError, OSError) as exc:
            raise ModelError(
                f"could not download {filename} from {repo_id}@{revision[:12]}: {exc}. "
                "Check the connection and run the fetch again; finished files are kept.",
                reason="download-failed",
            ) from exc

    return download


def fetch_shard(
    downloader: Downloader,
    destination: Path,
    *,
    model_id: str,
    revision: str,
    start: int,
    end: int,
    progress: ProgressCallback | None = None,
) -> Path:
    """Fetch what layers [start, end) need into ``destination`` and write its manifest.

    Progress (stage "fetch") counts weight files; a cancel raised by the
    callback stops between files, and finished files are kept for the next try.
    """
    destination = Path(destination)
    destination.mkdir(parents=True, exist_ok=True)

    def report(name: str, done: int, total: int) -> None:
        if progress is not None:
            message = f"Fetching {name}…" if name else f"Fetched layers {start}–{end}."
            progress(Progress(STAGE_FETCH, done, total, message))

    for name in METADATA_FILES:
        downloader(name, destination)
    for name in OPTIONAL_FILES:
        try:
            downloader(name, destination)
        except FileNotFoundError:
            log.debug("optional file absent", extra={"file": name})
    config = _read_json(destination / "config.json")
    layer_count = int(config["num_hidden_layers"])
    try:
        downloader(INDEX_NAME, destination)
        weight_map = _read_json(destination / INDEX_NAME)["weight_map"]
        weights = files_for_layers(
            weight_map, start, end, layer_count, tied=bool(config.get("tie_word_embeddings"))
        )
    except FileNotFoundError:
        weights = (SINGLE_FILE,)  # an unsharded model has one file holding everything
    for done, name in enumerate(weights):
        report(name, done, len(weights))
        downloader(name, destination)
    report("", len(weights), len(weights))
    manifest = ModelManifest.build(
        destination,
        model_id=model_id,
        revision=revision,
        architecture=str((config.get("architectures") or ["unknown"])[0]),
        layer_count=layer_count,
        source={"kind": "hub", "revision": revision, "layers": [start, end]},
    )
    manifest.write(destination)
    return destination


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ModelError(f"cannot read {path.name}: {exc}") from exc
