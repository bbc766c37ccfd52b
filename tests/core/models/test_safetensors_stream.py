"""The streaming safetensors writer: standard readers load its files, and a tensor that
differs from the declared plan is refused before it is written."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file

from core.errors import ModelImportError
from core.models.safetensors_stream import PlannedTensor, SafetensorsStreamWriter


def _tensors() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return {
        "b.weight": torch.randn(3, 5, generator=g),
        "a.half": torch.randn(7, generator=g).half(),
        "c.bf16": torch.randn(2, 2, 2, generator=g).to(torch.bfloat16),
        "d.ids": torch.arange(6, dtype=torch.int64).reshape(2, 3),
        "e.scalar": torch.tensor(1.5),
        "f.empty": torch.empty(0, 4),
    }


def _plan(tensors: dict[str, torch.Tensor]) -> list[PlannedTensor]:
    return [PlannedTensor(n, t.dtype, tuple(t.shape)) for n, t in tensors.items()]


def test_streamed_file_loads_with_load_file_and_safe_open(tmp_path: Path) -> None:
    tensors = _tensors()
    path = tmp_path / "model.safetensors"
    with SafetensorsStreamWriter(path, _plan(tensors)) as writer:
        for name, tensor in tensors.items():
            writer.write(name, tensor)
    loaded = load_file(str(path))
    assert set(loaded) == set(tensors)
    for name, tensor in tensors.items():
        assert loaded[name].dtype == tensor.dtype and torch.equal(loaded[name], tensor), name
    with safe_open(str(path), framework="pt") as f:
        assert f.metadata() == {"format": "pt"}
        assert torch.equal(f.get_tensor("b.weight"), tensors["b.weight"])
    header_length = struct.unpack("<Q", path.read_bytes()[:8])[0]
    assert header_length % 8 == 0
    expected_bytes = sum(t.numel() * t.element_size() for t in tensors.values())
    assert path.stat().st_size == 8 + header_length + expected_bytes


@pytest.mark.parametrize(
    ("name", "tensor", "message"),
    [
        ("other", torch.zeros(3, 5), "expected tensor 'b.weight' next, got 'other'"),
        ("b.weight", torch.zeros(5, 3), r"declared F32 \[3, 5\], got torch.float32 \[5, 3\]"),
        ("b.weight", torch.zeros(3, 5, dtype=torch.float16), "got torch.float16"),
    ],
)
def test_a_tensor_unlike_its_declaration_is_refused(
    name: str, tensor: torch.Tensor, message: str, tmp_path: Path
) -> None:
    writer = SafetensorsStreamWriter(tmp_path / "m.safetensors", _plan(_tensors()))
    with pytest.raises(ModelImportError, match=message):
        writer.write(name, tensor)


def test_an_undeclared_or_missing_tensor_is_refused(tmp_path: Path) -> None:
    plan = [PlannedTensor("x", torch.float32, (2,))]
    writer = SafetensorsStreamWriter(tmp_path / "m.safetensors", plan)
    writer.write("x", torch.zeros(2))
    with pytest.raises(ModelImportError, match="'y' was not declared"):
        writer.write("y", torch.zeros(2))
    writer.close()
    short = SafetensorsStreamWriter(tmp_path / "short.safetensors", [*plan, *_plan(_tensors())])
    short.write("x", torch.zeros(2))
    with pytest.raises(
        ModelImportError, match=r"6 of 7 tensors were not written, the first 'b\.weight'"
    ):
        short.close()
