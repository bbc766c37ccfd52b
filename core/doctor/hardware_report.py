"""What this machine has and which layers of a model it could serve, before any loading.

`meshnet-node hardware --json` prints :func:`hardware_report`; the doctor
wizard shows it on its "hardware found" page and pre-fills the layer range
with the suggestion. It works before the default model is imported: the
sizes then come from the packaged GGUF's tensor table (no weight is decoded),
so a first-time contributor sees a suggestion without waiting for an import.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from core.doctor.hardware import (
    DEFAULT_KV_TOKENS,
    HardwareInfo,
    ModelFootprint,
    detect_hardware,
    footprint_from_shapes,
    suggest_layer_range,
    tensor_shapes,
)
from core.models.default_model import DEFAULT_MODEL_ID, default_model_folder, find_default_gguf
from core.models.manifest import MANIFEST_NAME
from core.paths import models_dir
from core.recipes.catalogue import Recipe, load_catalogue
from core.runtime.config import ModelConfig
from core.runtime.dtypes import parse_dtype

log = logging.getLogger(__name__)


def max_layers_anywhere(
    footprint: ModelFootprint, free_bytes: int, kv_tokens: int = DEFAULT_KV_TOKENS
) -> int:
    """The longest length whose ranges fit at the start, in the middle and at the end.

    A range at either end also holds the embedding or the LM head, and the
    tracker may send a node to either end, so room is counted where it is least.
    """
    n = footprint.layer_count
    for length in range(n, 0, -1):
        places = [(0, length), (n - length, n)]
        if length <= n - 2:
            places.append((1, 1 + length))
        if all(footprint.needed_bytes(a, b, kv_tokens) <= free_bytes for a, b in places):
            return length
    return 0


def model_shapes(model: str | None) -> tuple[str, ModelConfig, dict[str, list[int]], bool]:
    """(model id, config, HF tensor shapes, imported) without importing anything."""
    if model is None or model == DEFAULT_MODEL_ID:
        folder = default_model_folder()
        if (folder / MANIFEST_NAME).is_file():
            return DEFAULT_MODEL_ID, ModelConfig.from_folder(folder), tensor_shapes(folder), True
        from core.models.gguf_import import gguf_tensor_shapes

        hf_config, shapes = gguf_tensor_shapes(find_default_gguf())
        return DEFAULT_MODEL_ID, ModelConfig.from_hf(hf_config), shapes, False
    from core.models.local import resolve_model
    from core.models.manifest import ModelManifest

    folder = resolve_model(model)
    manifest = ModelManifest.load(folder)
    return manifest.model_id, ModelConfig.from_folder(folder), tensor_shapes(folder), True


def recipe_footprint(
    shapes: dict[str, list[int]], config: ModelConfig, recipe: Recipe
) -> ModelFootprint:
    """A model's sizes as this recipe runs it (its compute and KV cache dtypes, its
    weight quantization)."""
    return footprint_from_shapes(
        shapes,
        layer_count=config.num_layers,
        num_kv_heads=config.num_kv_heads,
        head_dim=config.head_dim,
        compute_itemsize=parse_dtype(recipe.compute_dtype).itemsize,
        kv_itemsize=parse_dtype(recipe.kv_dtype).itemsize,
        weight_quantization=recipe.weight_quantization,
    )


def hardware_report(
    model: str | None = None,
    device: str | None = None,
    memory_cap_bytes: int | None = None,
    *,
    kv_tokens: int = DEFAULT_KV_TOKENS,
    disk_path: Path | None = None,
) -> dict[str, Any]:
    """The `hardware --json` document (see /tmp/contract.md, the child protocol)."""
    hardware = detect_hardware(
        device, disk_path=disk_path or models_dir(), memory_cap_bytes=memory_cap_bytes
    )
    model_id, config, shapes, imported = model_shapes(model)
    recipe = load_catalogue().default_for(config.architecture, hardware.device.kind)
    footprint = recipe_footprint(shapes, config, recipe)
    suggested = suggest_layer_range(footprint, hardware.device.free_bytes, kv_tokens)
    room = max_layers_anywhere(footprint, hardware.device.free_bytes, kv_tokens)
    return {
        "device": {
            "kind": hardware.device.kind,
            "name": hardware.device.name,
            "total_bytes": hardware.device.total_bytes,
            "free_bytes": hardware.device.free_bytes,
        },
        "ram_total_bytes": hardware.ram_total_bytes,
        "ram_available_bytes": hardware.ram_available_bytes,
        "disk_free_bytes": hardware.disk_free_bytes,
        "cpu_count": hardware.cpu_count,
        "model": {"model_id": model_id, "layer_count": config.num_layers, "imported": imported},
        "suggested_layers": list(suggested) if suggested else None,
        # What the wizard tells the tracker to be told which range the swarm needs.
        "room_layers": room,
        "recipe_id": recipe.recipe_id,
        "suggestion": suggestion_sentence(
            hardware, model_id, footprint, suggested, kv_tokens, memory_cap_bytes
        ),
    }


def suggestion_sentence(
    hardware: HardwareInfo,
    model_id: str,
    footprint: ModelFootprint,
    suggested: tuple[int, int] | None,
    kv_tokens: int = DEFAULT_KV_TOKENS,
    memory_cap_bytes: int | None = None,
) -> str:
    free = hardware.device.free_bytes
    where = "GPU memory" if hardware.device.kind == "cuda" else "memory"
    capped = (
        " (your memory cap)" if memory_cap_bytes is not None and free == memory_cap_bytes else ""
    )
    if suggested is None:
        need = footprint.needed_bytes(0, 1, kv_tokens)
        return (
            f"Not even one layer of {model_id} fits: it needs {need / 1e9:.1f} GB, "
            f"{free / 1e9:.1f} GB of {where} is free{capped}. Close other programs or raise "
            "the memory cap."
        )
    start, end = suggested
    need = footprint.needed_bytes(start, end, kv_tokens)
    whole = " (the whole model)" if (start, end) == (0, footprint.layer_count) else ""
    return (
        f"Layers {start}–{end} of {model_id}{whole} fit: they need {need / 1e9:.1f} GB, "
        f"{free / 1e9:.1f} GB of {where} is free{capped}."
    )
