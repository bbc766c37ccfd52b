"""Read named tensors of a Hugging Face model folder straight from safetensors.

Only the tensors asked for are read, and only the files holding them are opened
(``model.safetensors.index.json``'s ``weight_map`` says which), so a shard's
memory is its own weights. safetensors/OS errors are mapped to ModelError here.

A GGUF import may keep its weights as ``model.gguf`` instead (``gguf_weights``);
``open_weights`` picks the reader by what the folder holds, so every caller loads
either form the same way.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

import torch
from safetensors import safe_open

from core.errors import ModelError
from core.runtime.gguf_weights import GGUF_NAME, GgufWeightSource

log = logging.getLogger(__name__)

INDEX_NAME = "model.safetensors.index.json"


class TensorSource(Protocol):
    """What ``Shard.load`` reads weights through: Hugging Face names in, tensors out."""

    folder: Path
    files_opened: list[str]

    def has(self, name: str) -> bool: ...

    def load(self, names: Iterable[str]) -> dict[str, torch.Tensor]: ...


def holds_safetensors(folder: Path) -> bool:
    return (Path(folder) / INDEX_NAME).exists() or any(Path(folder).glob("*.safetensors"))


def open_weights(folder: Path) -> TensorSource:
    """The folder's safetensors, or else its ``model.gguf`` (a GGUF-backed import)."""
    folder = Path(folder)
    if not holds_safetensors(folder) and (folder / GGUF_NAME).is_file():
        return GgufWeightSource(folder)
    return WeightSource(folder)


class WeightSource:
    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._where = self._tensor_files()  # tensor name -> file name
        self.files_opened: list[str] = []

    def _tensor_files(self) -> dict[str, str]:
        index = self.folder / INDEX_NAME
        if index.exists():
            try:
                weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise ModelError(
                    f"{index} has no readable weight_map: {exc}", reason="weights-bad"
                ) from exc
            if not isinstance(weight_map, dict):
                raise ModelError(f"{index} weight_map is not an object", reason="weights-bad")
            return {str(k): str(v) for k, v in weight_map.items()}
        files = sorted(self.folder.glob("*.safetensors"))
        if not files:
            raise ModelError(
                f"{self.folder} holds no *.safetensors file (nor {GGUF_NAME})",
                reason="weights-missing",
            )
        where: dict[str, str] = {}
        for path in files:  # no index: list the keys (reads headers only)
            with self._open(path) as f:
                for name in f.keys():  # noqa: SIM118 - safe_open is not a mapping
                    where[name] = path.name
        return where

    def _open(self, path: Path) -> Any:
        try:
            return safe_open(str(path), framework="pt", device="cpu")
        except (OSError, RuntimeError, ValueError) as exc:
            raise ModelError(
                f"cannot open safetensors file {path}: {exc}", reason="weights-bad"
            ) from exc

    def has(self, name: str) -> bool:
        return name in self._where

    def load(self, names: Iterable[str]) -> dict[str, torch.Tensor]:
        """The named tensors, grouped by file so each file is opened once."""
        by_file: dict[str, list[str]] = {}
        for name in names:
            if name not in self._where:
                raise ModelError(
                    f"tensor {name!r} is not in the model files of {self.folder}",
                    reason="weights-missing",
                )
            by_file.setdefault(self._where[name], []).append(name)
        out: dict[str, torch.Tensor] = {}
        for file_name, wanted in by_file.items():
            path = self.folder / file_name
            self.files_opened.append(file_name)
            with self._open(path) as f:
                for name in wanted:
                    try:
                        out[name] = f.get_tensor(name)
                    except Exception as exc:  # safetensors raises its own error types
                        raise ModelError(
                            f"cannot read tensor {name!r} from {path}: {exc}", reason="weights-bad"
                        ) from exc
        log.debug("loaded %d tensors from %s", len(out), sorted(by_file))
        return out
