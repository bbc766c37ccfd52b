"""What this machine has, and how many layers of a model fit in it.

Memory is read through psutil (``virtual_memory().available`` counts
reclaimable cache, which is what a new allocation can really get) on every OS,
so Windows and macOS see their RAM as Linux does; ``torch.cuda.mem_get_info``
for a CUDA GPU. A memory cap (``--memory-cap-mb``) lowers what the doctor
treats as free, so a contributor keeps room for a game. Sizes of a shard are
read from the safetensors headers (or a GGUF-backed folder's tensor table) — a
few kilobytes — so "does it fit?" is answered before a single weight is loaded.
"""

from __future__ import annotations

import json
import logging
import os
import platform as platform_module
import shutil
import struct
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import psutil
import torch

from core.errors import ModelError
from core.runtime.gguf_weights import GGUF_NAME, gguf_shapes, open_gguf
from core.runtime.quant import INT4_G32_INT8_HEAD, INT8_PER_CHANNEL, NO_QUANTIZATION
from core.runtime.quant4 import GROUP

log = logging.getLogger(__name__)

GIB = 1024**3
# Room for KV sessions a suggested range keeps free: 4 sessions of 2048 positions.
DEFAULT_KV_TOKENS = 4 * 2048
# Activations, allocator slack and the probe's own tensors, beyond weights and KV.
FIXED_OVERHEAD_BYTES = 256 * 1024**2
OVERHEAD_FRACTION = 0.10
_HEADER_LIMIT = 100 * 1024**2  # a safetensors header larger than this is not one


@dataclass(frozen=True)
class DeviceInfo:
    kind: str  # "cuda" | "mps" | "cpu"
    name: str
    total_bytes: int
    free_bytes: int  # what a new allocation on this device can get now


@dataclass(frozen=True)
class HardwareInfo:
    device: DeviceInfo
    ram_total_bytes: int
    ram_available_bytes: int
    disk_free_bytes: int
    disk_path: str
    cpu_count: int


def system_memory() -> tuple[int, int]:
    """(total, available) bytes of RAM, the same way on Linux, macOS and Windows."""
    try:
        memory = psutil.virtual_memory()
    except (OSError, RuntimeError) as exc:
        log.warning("cannot read this machine's memory size: %s", exc)
        return 0, 0
    return int(memory.total), int(memory.available)


def cap_memory(device: DeviceInfo, cap_bytes: int | None) -> DeviceInfo:
    """The device as the doctor should see it under a memory cap: free = min(free, cap)."""
    if cap_bytes is None:
        return device
    return replace(device, free_bytes=max(0, min(device.free_bytes, int(cap_bytes))))


def detect_device(prefer: str | None = None, memory_cap_bytes: int | None = None) -> DeviceInfo:
    """The best device torch can use (CUDA, then Apple MPS, then CPU), or ``prefer``."""
    return cap_memory(_detect_device(prefer), memory_cap_bytes)


def _detect_device(prefer: str | None) -> DeviceInfo:
    kind = prefer.split(":", 1)[0] if prefer else _best_kind()
    if kind == "cuda" and torch.cuda.is_available():
        index = torch.device(prefer or "cuda").index or 0
        free, total = torch.cuda.mem_get_info(index)
        return DeviceInfo("cuda", torch.cuda.get_device_name(index), int(total), int(free))
    ram_total, ram_available = system_memory()
    if kind == "mps" and torch.backends.mps.is_available():
        # Unified memory: the GPU allocates from system RAM.
        return DeviceInfo("mps", "Apple GPU (unified memory)", ram_total, ram_available)
    return DeviceInfo("cpu", _cpu_name(), ram_total, ram_available)


def _best_kind() -> str:
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def _cpu_name(platform: str = sys.platform) -> str:
    """The processor's marketing name, from what each OS offers."""
    if platform == "win32":
        name = os.environ.get("PROCESSOR_IDENTIFIER") or platform_module.processor()
        return name.strip() or "CPU"
    if platform == "darwin":
        try:
            done = subprocess.run(
                ["sysctl", "-n", "machdep.cpu.brand_string"],
                capture_output=True,
                text=True,
                timeout=5,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            done = None
        if done is not None and done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip()
        return platform_module.processor() or "CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform_module.processor() or "CPU"


def detect_hardware(
    prefer: str | None = None,
    disk_path: Path | None = None,
    memory_cap_bytes: int | None = None,
) -> HardwareInfo:
    device = detect_device(prefer, memory_cap_bytes)
    ram_total, ram_available = system_memory()
    path = Path(disk_path) if disk_path is not None else Path.home()
    try:
        disk_free = shutil.disk_usage(path).free
    except OSError:
        disk_free = 0
    return HardwareInfo(device, ram_total, ram_available, disk_free, str(path), os.cpu_count() or 1)


# -- sizing a shard from the safetensors headers --------------------------------------


def _header_shapes(path: Path) -> dict[str, list[int]]:
    with path.open("rb") as handle:
        raw = handle.read(8)
        if len(raw) != 8:
            raise ModelError(f"{path} is too short to be a safetensors file", reason="weights-bad")
        (length,) = struct.unpack("<Q", raw)
        if length > _HEADER_LIMIT:
            raise ModelError(f"{path} has an implausible header size", reason="weights-bad")
        header = json.loads(handle.read(length))
    return {name: list(meta["shape"]) for name, meta in header.items() if name != "__metadata__"}


def tensor_shapes(model_dir: Path) -> dict[str, list[int]]:
    """Every tensor's shape in a model folder, read from the file headers only (a
    GGUF-backed folder: its tensor table, the shapes its tensors decode to)."""
    shapes: dict[str, list[int]] = {}
    files = sorted(Path(model_dir).glob("*.safetensors"))
    if not files and (Path(model_dir) / GGUF_NAME).is_file():
        return gguf_shapes(open_gguf(Path(model_dir) / GGUF_NAME))
    if not files:
        raise ModelError(
            f"{model_dir} holds no *.safetensors file (nor {GGUF_NAME})", reason="weights-missing"
        )
    for path in files:
        try:
            shapes.update(_header_shapes(path))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ModelError(
                f"cannot read the header of {path}: {exc}", reason="weights-bad"
            ) from exc
    return shapes


def _elements(shape: list[int]) -> int:
    count = 1
    for dim in shape:
        count *= int(dim)
    return count


@dataclass(frozen=True)
class ModelFootprint:
    """Bytes each part of a model takes as a recipe stores it, and KV per position.

    A quantized recipe's shard reads each part (a layer, the embedding, the final norm
    with the LM head) in float32 and quantizes it before reading the next
    (``Shard.load``), so loading it needs its stored bytes plus one part's float32
    working set, not the shard's float32 size: ``*_read_bytes`` are those float32
    sizes (empty / 0 under a float recipe, which reads in the dtype it keeps)."""

    layer_bytes: tuple[int, ...]
    embed_bytes: int
    head_bytes: int  # final norm + LM head (the embedding again when tied)
    tied: bool  # a shard holding both keeps one tensor for the embedding and the head
    kv_bytes_per_token_per_layer: int
    layer_read_bytes: tuple[int, ...] = ()
    embed_read_bytes: int = 0
    head_read_bytes: int = 0

    @property
    def layer_count(self) -> int:
        return len(self.layer_bytes)

    def weight_bytes(self, start: int, end: int) -> int:
        total = sum(self.layer_bytes[start:end])
        if start == 0:
            total += self.embed_bytes
        if end == self.layer_count:
            # A tied head on a shard that also embeds shares the embedding tensor.
            total += self.head_bytes - (self.embed_bytes if self.tied and start == 0 else 0)
        return total

    def load_bytes(self, start: int, end: int) -> int:
        """What a quantized load of [start, end) holds beyond the weights kept, at worst:
        three times the largest part read in float32. The part's concatenated copies
        (q|k|v, gate|up) or, from bfloat16 files, float32 copies, ~8 MiB row blocks
        while quantizing (quant.row_blocks) and the freed heap glibc keeps until the
        layer's end (runtime/heap.py) came to 1.1-2.1 times the 47 MiB layers of
        benchmarks/q4_load_memory.py's model (the peak above the packed weights, several
        runs). Never more than every part of the range in float32, which the load held
        at once before it quantized part by part: a short range whose embedding is most
        of it (a first shard of a large vocabulary) is not sized above its float32 load.
        0 for a float recipe, whose load holds its own weights."""
        parts = list(self.layer_read_bytes[start:end])
        if not parts:
            return 0
        if start == 0:
            parts.append(self.embed_read_bytes)
        if end == self.layer_count:
            parts.append(self.head_read_bytes)
        return min(3 * max(parts), sum(parts))

    def needed_bytes(self, start: int, end: int, kv_tokens: int = DEFAULT_KV_TOKENS) -> int:
        """Weights, the load's float32 working set, KV room for ``kv_tokens`` positions,
        and working overhead."""
        weights = self.weight_bytes(start, end)
        kv = (end - start) * self.kv_bytes_per_token_per_layer * kv_tokens
        overhead = int(weights * (1 + OVERHEAD_FRACTION)) + FIXED_OVERHEAD_BYTES
        return overhead + self.load_bytes(start, end) + kv


def _stored_bytes(name: str, shape: list[int], itemsize: int, weight_quantization: str) -> int:
    """Bytes one Hugging Face tensor takes as ``weight_quantization`` keeps it
    (``Shard.load``): int4 projections in groups of 32 (a nibble per weight and a
    bfloat16 scale and zero per group), int8 projections with a float32 scale per row,
    the int4 recipe's embedding and head as int8 rows with a bfloat16 scale each, the
    int8 recipe's head likewise with a float32 scale (its embedding stays float); norms
    and biases in the compute dtype."""
    elements = _elements(shape)
    if weight_quantization == NO_QUANTIZATION or len(shape) != 2:
        return elements * itemsize
    rows, cols = (int(n) for n in shape)
    if name.startswith("model.layers."):  # a projection
        if weight_quantization == INT4_G32_INT8_HEAD:
            return elements // 2 + (cols // GROUP) * rows * 2 * 2
        return elements + rows * 4
    if weight_quantization == INT8_PER_CHANNEL and name == "model.embed_tokens.weight":
        return elements * itemsize
    scale_bytes = 2 if weight_quantization == INT4_G32_INT8_HEAD else 4
    return elements + rows * scale_bytes


def footprint_from_shapes(
    shapes: dict[str, list[int]],
    *,
    layer_count: int,
    num_kv_heads: int,
    head_dim: int,
    compute_itemsize: int,
    kv_itemsize: int,
    weight_quantization: str = NO_QUANTIZATION,
) -> ModelFootprint:
    """Sizes from Hugging Face tensor names and shapes (safetensors headers or a GGUF
    table), as ``weight_quantization`` stores the weights."""
    quantized = weight_quantization != NO_QUANTIZATION
    layers, read = [0] * layer_count, [0] * layer_count
    embed = head = embed_read = head_read = 0
    for name, shape in shapes.items():
        size = _stored_bytes(name, shape, compute_itemsize, weight_quantization)
        float_size = _elements(shape) * compute_itemsize
        if name.startswith("model.layers."):
            index = int(name.split(".")[2])
            if index < layer_count:
                layers[index] += size
                read[index] += float_size
        elif name == "model.embed_tokens.weight":
            embed, embed_read = size, float_size
        elif name in ("model.norm.weight", "lm_head.weight"):
            head += size
            head_read += float_size
    tied = "lm_head.weight" not in shapes
    if tied:  # the head is the embedding's tensor, as the head stores it
        embed_shape = shapes.get("model.embed_tokens.weight", [0, 0])
        head += _stored_bytes("lm_head.weight", embed_shape, compute_itemsize, weight_quantization)
        head_read += embed_read
    kv_per_layer = 2 * num_kv_heads * head_dim * kv_itemsize
    return ModelFootprint(
        tuple(layers),
        embed,
        head,
        # int8 keeps the embedding in float and gives the head an int8 copy of its own
        tied and weight_quantization != INT8_PER_CHANNEL,
        kv_per_layer,
        tuple(read) if quantized else (),
        embed_read if quantized else 0,
        head_read if quantized else 0,
    )


def suggest_layer_range(
    footprint: ModelFootprint, free_bytes: int, kv_tokens: int = DEFAULT_KV_TOKENS
) -> tuple[int, int] | None:
    """The largest contiguous range that fits in ``free_bytes`` with room for KV.

    Tries the first layers (with the embedding), the last (with the head) and
    a middle run (neither); prefers the longest, then the first. None when not
    even one layer fits.
    """
    n = footprint.layer_count
    best: tuple[int, int] | None = None
    for length in range(n, 0, -1):
        candidates = [(0, length), (n - length, n)]
        if length <= n - 2:
            candidates.append((1, 1 + length))
        fitting = [c for c in candidates if footprint.needed_bytes(*c, kv_tokens) <= free_bytes]
        if fitting:
            best = fitting[0]
            break
    return best
