"""What this machine has, and how many layers of a model fit in it.

Memory is read through psutil (``virtual_memory().available`` counts
reclaimable cache, which is what a new allocation can really get) on every OS,
so Windows and macOS see their RAM as Linux does; ``torch.cuda.mem_get_info``
for a CUDA GPU. A memory cap (``--memory-cap-mb``) lowers what the doctor
treats as free, so a contributor keeps room for a game. Sizes of a shard are
read from the safetensors headers — a few kilobytes — so "does it fit?" is
answered before a single weight is loaded.
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
    """Every tensor's shape in a model folder, read from the file headers only."""
    shapes: dict[str, list[int]] = {}
    files = sorted(Path(model_dir).glob("*.safetensors"))
    if not files:
        raise ModelError(f"{model_dir} holds no *.safetensors file", reason="weights-missing")
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
    """Bytes each part of a model takes in the compute dtype, and KV per position."""

    layer_bytes: tuple[int, ...]
    embed_bytes: int
    head_bytes: int  # final norm + LM head (the embedding again when tied)
    tied: bool
    kv_bytes_per_token_per_layer: int

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

    def needed_bytes(self, start: int, end: int, kv_tokens: int = DEFAULT_KV_TOKENS) -> int:
        """Weights, KV room for ``kv_tokens`` positions, and working overhead."""
        weights = self.weight_bytes(start, end)
        kv = (end - start) * self.kv_bytes_per_token_per_layer * kv_tokens
        return int(weights * (1 + OVERHEAD_FRACTION)) + kv + FIXED_OVERHEAD_BYTES


def footprint_from_shapes(
    shapes: dict[str, list[int]],
    *,
    layer_count: int,
    num_kv_heads: int,
    head_dim: int,
    compute_itemsize: int,
    kv_itemsize: int,
) -> ModelFootprint:
    """Sizes from Hugging Face tensor names and shapes (safetensors headers or a GGUF table)."""
    layers = [0] * layer_count
    embed = head = 0
    for name, shape in shapes.items():
        size = _elements(shape) * compute_itemsize
        if name.startswith("model.layers."):
            index = int(name.split(".")[2])
            if index < layer_count:
                layers[index] += size
        elif name == "model.embed_tokens.weight":
            embed = size
        elif name in ("model.norm.weight", "lm_head.weight"):
            head += size
    tied = "lm_head.weight" not in shapes
    if tied:
        head += embed
    kv_per_layer = 2 * num_kv_heads * head_dim * kv_itemsize
    return ModelFootprint(tuple(layers), embed, head, tied, kv_per_layer)


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
