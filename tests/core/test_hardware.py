"""Hardware detection and shard sizing, checked against what the runtime really loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.doctor.hardware import (
    DEFAULT_KV_TOKENS,
    FIXED_OVERHEAD_BYTES,
    OVERHEAD_FRACTION,
    ModelFootprint,
    detect_device,
    detect_hardware,
    footprint_from_shapes,
    suggest_layer_range,
    system_memory,
    tensor_shapes,
)
from core.errors import ModelError
from core.runtime.config import ModelConfig
from core.runtime.quant import INT4_G32_INT8_HEAD, INT8_PER_CHANNEL, NO_QUANTIZATION
from core.runtime.shard import Shard


def _footprint(
    model_dir: Path, itemsize: int = 4, weight_quantization: str = NO_QUANTIZATION
) -> ModelFootprint:
    cfg = ModelConfig.from_folder(model_dir)
    return footprint_from_shapes(
        tensor_shapes(model_dir),
        layer_count=cfg.num_layers,
        num_kv_heads=cfg.num_kv_heads,
        head_dim=cfg.head_dim,
        compute_itemsize=itemsize,
        kv_itemsize=itemsize,
        weight_quantization=weight_quantization,
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


@pytest.mark.parametrize("scheme", [INT4_G32_INT8_HEAD, INT8_PER_CHANNEL])
@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize(("start", "end"), [(0, 4), (0, 2), (1, 3), (2, 4)])
def test_a_quantized_footprint_equals_the_loaded_shard_weight_bytes(
    tiny_model_dir: Path, tiny_tied_model_dir: Path, scheme: str, tied: bool, start: int, end: int
) -> None:
    """Sized as the recipe stores the weights (int4 groups or int8 rows, one int8 table
    for a tied q4 head and embedding, a float embedding beside an int8 head copy under
    int8), not at float32."""
    folder = tiny_tied_model_dir if tied else tiny_model_dir
    footprint = _footprint(folder, weight_quantization=scheme)
    loaded = Shard.load(folder, start, end, weight_quantization=scheme).weight_bytes()
    assert footprint.weight_bytes(start, end) == loaded
    assert loaded < _footprint(folder).weight_bytes(start, end)


def test_a_quantized_range_needs_its_packed_bytes_plus_three_times_one_part_in_float32(
    tiny_model_dir: Path,
) -> None:
    """The load reads one part (a layer, the embedding, the head) in float32 at a time:
    the need adds three times the largest part read, never more than the range's parts
    in float32 together (what the load held at once before it quantized part by part)."""
    fp32 = _footprint(tiny_model_dir)
    q4 = _footprint(tiny_model_dir, weight_quantization=INT4_G32_INT8_HEAD)
    assert fp32.load_bytes(0, 4) == 0 and q4.layer_read_bytes == fp32.layer_bytes
    # two equal layers: three times one is more than both, so both it is
    assert q4.load_bytes(1, 3) == sum(fp32.layer_bytes[1:3]) < 3 * max(fp32.layer_bytes[1:3])
    assert q4.load_bytes(3, 4) == fp32.layer_bytes[3] + fp32.head_bytes
    parts = [*fp32.layer_bytes, fp32.embed_bytes, fp32.head_bytes]  # untied: own head
    assert q4.load_bytes(0, 4) == min(3 * max(parts), sum(parts))
    for start, end in [(0, 4), (1, 3), (3, 4)]:
        weights = q4.weight_bytes(start, end)
        kept = int(weights * (1 + OVERHEAD_FRACTION)) + FIXED_OVERHEAD_BYTES
        assert q4.needed_bytes(start, end, 0) == kept + q4.load_bytes(start, end)


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


# -- memory through psutil on every OS, the memory cap, the report before import ---------


def test_system_memory_comes_from_psutil(monkeypatch: pytest.MonkeyPatch) -> None:
    import psutil

    class Memory:
        total, available = 16 * 1024**3, 9 * 1024**3

    monkeypatch.setattr(psutil, "virtual_memory", lambda: Memory())
    assert system_memory() == (16 * 1024**3, 9 * 1024**3)
    device = detect_device("cpu")
    assert (device.total_bytes, device.free_bytes) == (16 * 1024**3, 9 * 1024**3)


def test_a_memory_cap_lowers_free_memory_and_never_raises_it() -> None:
    from core.doctor.hardware import DeviceInfo, cap_memory

    device = DeviceInfo("cpu", "CPU", 32 * 1024**3, 20 * 1024**3)
    assert cap_memory(device, 4 * 1024**3).free_bytes == 4 * 1024**3
    assert cap_memory(device, 64 * 1024**3).free_bytes == 20 * 1024**3
    assert cap_memory(device, None) is device
    assert detect_device("cpu", memory_cap_bytes=1024**2).free_bytes == 1024**2


def test_cpu_name_on_windows_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from core.doctor.hardware import _cpu_name

    monkeypatch.setenv("PROCESSOR_IDENTIFIER", "AMD64 Family 25 Model 33, AuthenticAMD")
    assert _cpu_name("win32") == "AMD64 Family 25 Model 33, AuthenticAMD"


def test_cpu_name_on_macos_asks_sysctl(monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    from core.doctor.hardware import _cpu_name

    asked: list[list[str]] = []

    def sysctl(argv: list[str], **_kwargs: object) -> subprocess.CompletedProcess[str]:
        asked.append(argv)
        return subprocess.CompletedProcess(argv, 0, stdout="Apple M2 Pro\n", stderr="")

    monkeypatch.setattr(subprocess, "run", sysctl)
    assert _cpu_name("darwin") == "Apple M2 Pro"
    assert asked == [["sysctl", "-n", "machdep.cpu.brand_string"]]


def test_cpu_name_on_macos_without_sysctl_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    import platform
    import subprocess

    from core.doctor.hardware import _cpu_name

    def missing(*_args: object, **_kwargs: object) -> None:
        raise FileNotFoundError("sysctl")

    monkeypatch.setattr(subprocess, "run", missing)
    monkeypatch.setattr(platform, "processor", lambda: "arm")
    assert _cpu_name("darwin") == "arm"


def test_hardware_report_suggests_layers_before_the_default_model_is_imported() -> None:
    from core.doctor.hardware_report import hardware_report
    from core.models.default_model import default_model_folder

    assert not default_model_folder().exists()  # MESHNET_HOME is this test's own folder
    report = hardware_report(device="cpu", memory_cap_bytes=8 * 1024**3)
    assert report["model"] == {
        "model_id": "smollm2-135m-instruct",
        "layer_count": 30,
        "imported": False,
    }
    assert report["device"]["kind"] == "cpu"
    assert report["device"]["free_bytes"] <= 8 * 1024**3
    assert report["suggested_layers"] == [0, 30]
    assert report["suggestion"].startswith("Layers 0–30 of smollm2-135m-instruct")
    assert not default_model_folder().exists()  # nothing was imported to answer
    assert report["ram_total_bytes"] >= report["ram_available_bytes"] > 0
    assert report["cpu_count"] >= 1 and report["disk_free_bytes"] > 0


def test_hardware_report_sizes_match_between_the_gguf_and_the_imported_model(
    default_model_dir: Path,
) -> None:
    from core.doctor.hardware import footprint_from_shapes
    from core.models.default_model import find_default_gguf
    from core.models.gguf_import import gguf_tensor_shapes

    config, shapes = gguf_tensor_shapes(find_default_gguf())
    sizes = {
        "layer_count": 30,
        "num_kv_heads": config["num_key_value_heads"],
        "head_dim": config["head_dim"],
        "compute_itemsize": 4,
        "kv_itemsize": 4,
    }
    from_gguf = footprint_from_shapes(shapes, **sizes)
    assert from_gguf == footprint_from_shapes(tensor_shapes(default_model_dir), **sizes)


def test_hardware_report_under_a_tiny_cap_suggests_nothing_and_says_why() -> None:
    from core.doctor.hardware_report import hardware_report

    report = hardware_report(device="cpu", memory_cap_bytes=1024**2)
    assert report["suggested_layers"] is None
    assert report["suggestion"].startswith("Not even one layer of smollm2-135m-instruct fits")
    assert "raise the memory cap" in report["suggestion"]
