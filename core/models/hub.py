"""Fetch just the part of a hub model a shard needs.

A node serving layers [start, end) needs the config, the tokenizer, and only
the safetensors files that hold those layers — plus the embedding file for the
first shard and the final norm / LM head for the last. The index's
``weight_map`` says which file holds which tensor. Where the files come from is
a :class:`Downloader` (``hub_client.hub_downloader`` over huggingface_hub,
pinned to one commit; a folder copy in tests), so this module never touches
the network itself.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from core.errors import ConfigError, ModelError
from core.models.manifest import MANIFEST_NAME, ModelManifest
from core.progress import STAGE_FETCH, Progress, ProgressCallback

log = logging.getLogger(__name__)

INDEX_NAME = "model.safetensors.index.json"
SINGLE_FILE = "model.safetensors"
METADATA_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json")
OPTIONAL_FILES = ("generation_config.json",)
DOWNLOAD_STATE = ".cache"  # huggingface_hub's resume bookkeeping inside a local_dir
_LAYER = re.compile(r"^model\.layers\.(\d+)\.")

ByteCallback = Callable[[int], None]


class Downloader(Protocol):
    """Brings one file of the repository into ``local_dir`` and returns its path.

    Raises FileNotFoundError when the repository has no such file; calls
    ``on_bytes(n)`` as n more bytes of it arrive (when it can tell).
    """

    def __call__(
        self, filename: str, local_dir: Path, on_bytes: ByteCallback | None = None
    ) -> Path: ...


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


def fetch_shard(
    downloader: Downloader,
    destination: Path,
    *,
    model_id: str,
    revision: str,
    start: int = 0,
    end: int | None = None,
    progress: ProgressCallback | None = None,
    sizes: Mapping[str, int] | None = None,
    repo_id: str = "",
    check_config: Callable[[Path], object] | None = None,
) -> Path:
    """Fetch what layers [start, end) need into ``destination`` and write its manifest.

    ``end`` None means the model's last layer. Progress (stage "fetch") counts
    bytes of weight files, against ``sizes`` (file -> bytes) when they are
    known, else with total 0 until the end. A cancel raised by the callback
    stops the download; finished files are kept for the next try. Files an
    earlier fetch of another range left in ``destination`` are removed, so the
    manifest lists exactly this shard. ``check_config`` sees the folder once
    config.json is there: it refuses a model the runtime cannot compute before
    any weight is downloaded.
    """
    destination = Path(destination)
    destination.mkdir(parents=True, exist_ok=True)
    fetched = _fetch_metadata(downloader, destination)
    if check_config is not None:
        check_config(destination)
    config = _read_json(destination / "config.json")
    layer_count = int(config["num_hidden_layers"])
    end = layer_count if end is None else end
    if not 0 <= start < end <= layer_count:
        raise ConfigError(
            f"{repo_id or model_id} has {layer_count} layers, so layers {start}–{end} do not "
            f"exist: choose a range within 0:{layer_count}",
            reason="bad-layers",
        )
    try:
        downloader(INDEX_NAME, destination)
        fetched.add(INDEX_NAME)
        weight_map = _read_json(destination / INDEX_NAME)["weight_map"]
        weights = files_for_layers(
            weight_map, start, end, layer_count, tied=bool(config.get("tie_word_embeddings"))
        )
    except FileNotFoundError:
        weights = (SINGLE_FILE,)  # an unsharded model has one file holding everything
    _fetch_weights(downloader, destination, weights, sizes or {}, progress)
    if progress is not None:
        done = sum((destination / name).stat().st_size for name in weights)
        progress(Progress(STAGE_FETCH, done, done, f"Fetched layers {start}–{end}."))
    _remove_strays(destination, fetched | set(weights))
    source: dict[str, Any] = {"kind": "hub", "revision": revision, "layers": [start, end]}
    if repo_id:
        source["repo"] = repo_id
    manifest = ModelManifest.build(
        destination,
        model_id=model_id,
        revision=revision,
        architecture=str((config.get("architectures") or ["unknown"])[0]),
        layer_count=layer_count,
        source=source,
    )
    manifest.write(destination)
    return destination


def _fetch_metadata(downloader: Downloader, destination: Path) -> set[str]:
    fetched: set[str] = set()
    for name in METADATA_FILES:
        try:
            downloader(name, destination)
        except FileNotFoundError:
            raise ModelError(
                f"the repository has no {name} at this revision; MeshNet needs config.json, "
                "tokenizer.json and tokenizer_config.json (a fast tokenizer): choose a model "
                "or revision that has them",
                reason="model-incomplete",
            ) from None
        fetched.add(name)
    for name in OPTIONAL_FILES:
        try:
            downloader(name, destination)
            fetched.add(name)
        except FileNotFoundError:
            log.debug("optional file absent", extra={"file": name})
    return fetched


def _fetch_weights(
    downloader: Downloader,
    destination: Path,
    weights: tuple[str, ...],
    sizes: Mapping[str, int],
    progress: ProgressCallback | None,
) -> None:
    known = all(name in sizes for name in weights)
    total = sum(sizes[name] for name in weights) if known else 0
    finished = 0  # bytes of the files already complete
    for name in weights:
        size = f" ({_size(sizes[name])})" if name in sizes else ""
        message = f"Fetching {name}{size}…"
        arrived = 0

        def on_bytes(
            count: int, message: str = message, base: int = finished, item: str = name
        ) -> None:
            nonlocal arrived
            arrived += count
            if progress is not None:
                progress(Progress(STAGE_FETCH, base + arrived, total, message, item=item))

        if progress is not None:
            progress(Progress(STAGE_FETCH, finished, total, message, item=name))
        downloader(name, destination, on_bytes)
        finished += (destination / name).stat().st_size  # exact, whatever retries counted


def _remove_strays(destination: Path, keep: set[str]) -> None:
    """Drop huggingface_hub's bookkeeping and files this shard does not need."""
    shutil.rmtree(destination / DOWNLOAD_STATE, ignore_errors=True)
    for path in destination.iterdir():
        if path.is_file() and path.name not in keep and path.name != MANIFEST_NAME:
            log.info("removing a file this shard does not need", extra={"file": path.name})
            path.unlink()


def _size(count: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ModelError(f"cannot read {path.name}: {exc}") from exc
