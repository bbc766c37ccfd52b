"""Read named Hugging Face tensors of a GGUF-backed model folder straight from ``model.gguf``.

A GGUF import keeps the file as it came (a 4-bit file stays 4-bit on disk) instead
of unpacking it to float32 safetensors. The file is memory-mapped by the ``gguf``
package's reader; a tensor asked for is decoded alone, by the same code the
unpacked import writes with (``decode_tensor``: ``gguf_quants.dequantize`` and the
architecture's fixups in ``gguf_arch``), so a tensor read here is bit for bit the
one an unpacked folder holds. Reader and decoding errors are mapped to ModelError
here.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import torch

from core.errors import ModelError, ModelImportError
from core.runtime.gguf_arch import GgufArchitecture, architecture_of, hf_config_from_gguf
from core.runtime.gguf_quants import dequantize

log = logging.getLogger(__name__)

GGUF_NAME = "model.gguf"


def open_gguf(path: Path) -> Any:
    """The ``gguf`` package's reader over ``path`` (memory-mapped: no tensor is read)."""
    import gguf

    try:
        return gguf.GGUFReader(str(path))
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot read the GGUF file {path}: {exc}", reason="weights-bad") from exc


def hf_shape(tensor: Any) -> tuple[int, ...]:
    """A GGUF tensor's shape in PyTorch order (GGUF lists the fastest dimension first)."""
    return tuple(int(d) for d in reversed(tensor.shape))


def decode_tensor(
    family: GgufArchitecture, tensor: Any, config: dict[str, Any]
) -> tuple[str, torch.Tensor]:
    """(HF name, float32 tensor) of one GGUF tensor, as transformers' modules expect it.

    The import's unpacked form and the GGUF-backed source both decode through this,
    which is what makes them equal tensor for tensor."""
    name = family.hf_name(tensor.name)
    if name is None:
        raise ModelImportError(
            f"the GGUF tensor {tensor.name!r} has no {family.hf_class} counterpart"
        )
    try:
        weight = dequantize(tensor.data, int(tensor.tensor_type), hf_shape(tensor))
    except ModelImportError as exc:
        raise ModelImportError(f"the GGUF tensor {tensor.name!r}: {exc}") from exc
    return name, family.convert(name, weight, config).contiguous().float()


def gguf_shapes(reader: Any) -> dict[str, list[int]]:
    """HF tensor name -> shape from the tensor table (no tensor decoded). The
    architecture's fixups keep every shape, so these are the unpacked shapes."""
    family = architecture_of(reader)
    shapes: dict[str, list[int]] = {}
    for tensor in reader.tensors:
        name = family.hf_name(tensor.name)
        if name is not None:
            shapes[name] = list(hf_shape(tensor))
    return shapes


class GgufWeightSource:
    """``WeightSource``'s interface over a folder whose weights are ``model.gguf``."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.path = self.folder / GGUF_NAME
        if not self.path.is_file():
            raise ModelError(f"{self.folder} holds no {GGUF_NAME}", reason="weights-missing")
        self._reader = open_gguf(self.path)
        self._family = architecture_of(self._reader)
        self._config = hf_config_from_gguf(self._reader)
        self._tensors: dict[str, Any] = {}
        for tensor in self._reader.tensors:
            name = self._family.hf_name(tensor.name)
            if name is not None:
                self._tensors[name] = tensor
        self.files_opened: list[str] = []

    def has(self, name: str) -> bool:
        return name in self._tensors

    def shapes(self) -> dict[str, list[int]]:
        return {name: list(hf_shape(t)) for name, t in self._tensors.items()}

    def stored_bytes(self, name: str) -> int:
        """Bytes the tensor takes in the file (its quantized blocks)."""
        return int(self._tensors[name].n_bytes)

    def load(self, names: Iterable[str]) -> dict[str, torch.Tensor]:
        """The named tensors in float32, each decoded on its own from the mapped file."""
        out: dict[str, torch.Tensor] = {}
        for name in names:
            tensor = self._tensors.get(name)
            if tensor is None:
                raise ModelError(
                    f"tensor {name!r} is not in the model file {self.path}",
                    reason="weights-missing",
                )
            try:
                _, out[name] = decode_tensor(self._family, tensor, self._config)
            except ModelError:
                raise
            except (OSError, ValueError, RuntimeError) as exc:  # a short or damaged file
                raise ModelError(
                    f"cannot read tensor {name!r} from {self.path}: {exc}", reason="weights-bad"
                ) from exc
        if out:
            self.files_opened.append(GGUF_NAME)
        log.debug("decoded %d tensors from %s", len(out), self.path)
        return out
