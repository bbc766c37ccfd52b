"""Hardware detection and shard sizing, checked against what the runtime really loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import ModelError
from core.hardware import (
    DEFAULT_KV_TOKENS,
    ModelFootprint,
    detect_device,
    detect_hardware,
    model_footprint,
    suggest_layer_range,
    system_memory,
    tensor_shapes,
)
from core.runtime.config import ModelConfig
from core.runtime.shard import Shard


def _footprint(model_dir: Path, itemsize: int = 4) -> ModelFootprint:
    cfg = ModelConfig.from_folder(model_dir)
    return model_footprint(
        model_dir,
        layer_count=cfg.num_layers,
        num_kv_heads=cfg.num_kv_heads,
        head_dim=cfg.head_dim,
        compute_itemsize=itemsize,
        kv_itemsize=itemsize,
    )


def test_system_memory_reports_total_at_least_available() -> None:
    total, available = system_memory()
    assert total > 0 and 0 < available <= total


def test_detected_device_has_free_memory_within_its_total(tmp_path: Path) -> None:
    device = detect_device()
    assert device.kind in {"cuda", "mps", "cpu"}
    assert 0 < device.free_bytes <= device.total_bytes
    hardware = detect_hardware("cpu", disk_path=tmp_path)
    assert hardware.device.kind == "cpu" and hardware.disk_free_bytes > 0


@pytest.mark.parametrize(("start", "end"), [(0, 4), (0, 2), (1, 3), (2, 4), (3, 4)])
def test_footprint_from_headers_equals_the_loaded_shard_weight_bytes(
    tiny_model_dir: Path, start: int, end: int
) -> None:
    footprint = _footprint(tiny_model_dir)
    assert (
        footprint.weight_bytes(start, end) == Shard.load(tiny_model_dir, start, end).weight_bytes()
    )


@pytest.mark.parametrize(("start", "end"), [(0, 4), (2, 4), (0, 2)])
def test_tied_head_is_counted_once_with_the_embedding_and_again_without_it(
    tiny_tied_model_dir: Path, start: int, end: int
) -> None:
    footprint = _footprint(tiny_tied_model_dir)
    assert footprint.tied
    loaded = Shard.load(tiny_tied_model_dir, start, end).weight_bytes()
    assert footprint.weight_bytes(start, end) == loaded


def test_bf16_footprint_is_half_of_fp32(tiny_model_dir: Path) -> None:
    assert _footprint(tiny_model_dir, 2).weight_bytes(0, 4) * 2 == _footprint(
        tiny_model_dir
    ).weight_bytes(0, 4)


def test_kv_room_grows_the_need_per_layer_and_position(tiny_model_dir: Path) -> None:
    footprint = _footprint(tiny_model_dir)
    per_token = Shard.load(tiny_model_dir, 1, 3).kv_bytes_per_token()
    assert footprint.needed_bytes(1, 3, 1001) - footprint.needed_bytes(1, 3, 1000) == per_token


def test_suggestion_is_the_whole_model_when_it_fits(tiny_model_dir: Path) -> None:
    footprint = _footprint(tiny_model_dir)
    assert suggest_layer_range(footprint, footprint.needed_bytes(0, 4)) == (0, 4)


def test_suggestion_shrinks_to_the_longest_range_that_fits(tiny_model_dir: Path) -> None:
    footprint = _footprint(tiny_model_dir)
    free = footprint.needed_bytes(0, 4) - 1
    start, end = suggest_layer_range(footprint, free) or (0, 0)
    assert end - start == 3
    assert footprint.needed_bytes(start, end, DEFAULT_KV_TOKENS) <= free


def test_no_suggestion_when_not_even_one_layer_fits(tiny_model_dir: Path) -> None:
    assert suggest_layer_range(_footprint(tiny_model_dir), 1024) is None


def test_a_file_that_is_not_safetensors_is_a_model_error(tmp_path: Path) -> None:
    (tmp_path / "model.safetensors").write_bytes(b"\xff" * 8 + b"junk")
    with pytest.raises(ModelError):
        tensor_shapes(tmp_path)


def test_a_folder_without_weights_is_a_model_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError) as info:
        tensor_shapes(tmp_path)
    assert info.value.reason == "weights-missing"
