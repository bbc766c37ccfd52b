"""Write a safetensors file one tensor at a time.

``safetensors.torch.save_file`` needs every tensor in memory at once; a large
model imported from GGUF would then sit in memory whole, in float32. The
format only needs each tensor's name, dtype, shape and byte range up front,
so the header is written from a declared plan and the tensors follow in that
order, each dropped by the caller once written.

Layout (https://github.com/huggingface/safetensors#format): an 8-byte
little-endian header length, a JSON header padded with spaces to a multiple
of 8, then the tensors' bytes back to back in the header's order.
"""

from __future__ import annotations

import json
import struct
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

import torch

from core.errors import ModelImportError

_DTYPES: dict[torch.dtype, str] = {
    torch.float64: "F64",
    torch.float32: "F32",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.int64: "I64",
    torch.int32: "I32",
    torch.int16: "I16",
    torch.int8: "I8",
    torch.uint8: "U8",
    torch.bool: "BOOL",
}


@dataclass(frozen=True)
class PlannedTensor:
    """One tensor the file will hold, declared before any bytes are written."""

    name: str
    dtype: torch.dtype
    shape: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        count = 1
        for size in self.shape:
            count *= size
        return count * torch.empty((), dtype=self.dtype).element_size()


class SafetensorsStreamWriter:
    """Writes ``plan``'s header at once, then takes each tensor in the declared order.

    A tensor that differs from its declaration (name, dtype, shape, byte count)
    is refused: the header already promised where every byte goes.
    """

    def __init__(self, path: Path, plan: Sequence[PlannedTensor]) -> None:
        if sys.byteorder != "little":  # safetensors is little-endian; tensors go out raw
            raise ModelImportError("safetensors files can only be written on little-endian hosts")
        names = [entry.name for entry in plan]
        if len(set(names)) != len(names):
            raise ModelImportError("a safetensors plan names a tensor twice")
        for entry in plan:
            if entry.dtype not in _DTYPES:
                raise ModelImportError(
                    f"tensor {entry.name!r}: dtype {entry.dtype} has no safetensors code"
                )
        self._plan = list(plan)
        self._next = 0
        self._file: BinaryIO = open(path, "wb")  # noqa: SIM115 - closed by close()
        try:
            self._file.write(_header(self._plan))
        except BaseException:
            self._file.close()
            raise

    def write(self, name: str, tensor: torch.Tensor) -> None:
        """Append ``tensor``'s bytes; it must be the next declared tensor, exactly."""
        if self._next >= len(self._plan):
            raise ModelImportError(
                f"tensor {name!r} was not declared; all {len(self._plan)} are written"
            )
        expected = self._plan[self._next]
        if name != expected.name:
            raise ModelImportError(f"expected tensor {expected.name!r} next, got {name!r}")
        if tensor.dtype != expected.dtype or tuple(tensor.shape) != expected.shape:
            raise ModelImportError(
                f"tensor {name!r} was declared {_DTYPES[expected.dtype]} {list(expected.shape)}, "
                f"got {tensor.dtype} {list(tensor.shape)}"
            )
        data = tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy()
        if data.nbytes != expected.nbytes:
            raise ModelImportError(
                f"tensor {name!r} holds {data.nbytes} bytes; {expected.nbytes} were declared"
            )
        self._file.write(data.data)  # a view of the tensor's bytes, not a copy
        self._next += 1

    def close(self) -> None:
        """Finish the file; missing tensors are an error (the header counts them)."""
        if self._file.closed:
            return
        self._file.close()
        if self._next != len(self._plan):
            missing = self._plan[self._next].name
            raise ModelImportError(
                f"the safetensors file is incomplete: {len(self._plan) - self._next} of "
                f"{len(self._plan)} tensors were not written, the first {missing!r}"
            )

    def __enter__(self) -> SafetensorsStreamWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            self._file.close()  # the caller's error says more than "incomplete"


def _header(plan: Sequence[PlannedTensor]) -> bytes:
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for entry in plan:
        header[entry.name] = {
            "dtype": _DTYPES[entry.dtype],
            "shape": list(entry.shape),
            "data_offsets": [offset, offset + entry.nbytes],
        }
        offset += entry.nbytes
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # the tensor data starts 8-byte aligned
    return struct.pack("<Q", len(text)) + text
