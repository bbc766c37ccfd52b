"""Qwen3: the Llama block plus an RMSNorm over each query and key head before RoPE."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.runtime.families.base import FamilyAdapter, sliding_layers_of
from core.runtime.families.gguf import LLAMA_LAYER, QK_NORMS, GgufArchitecture, GgufMeta


def qwen3_attention_fields(d: Mapping[str, Any], common: Mapping[str, Any]) -> dict[str, Any]:
    bias = bool(d.get("attention_bias", False))
    fields: dict[str, Any] = {"qk_norm": True, "attention_out_bias": bias}
    window = d.get("sliding_window")
    if window is None or not d.get("use_sliding_window", False):
        return fields  # transformers drops the window unless use_sliding_window
    n = common["num_layers"]
    layer_types = d.get("layer_types")
    if layer_types is None:  # transformers' default: layers from max_window_layers on slide
        first = int(d.get("max_window_layers", n))
        layer_types = ["sliding_attention" if i >= first else "full_attention" for i in range(n)]
    return {
        **fields,
        "sliding_window": int(window),
        "sliding_layers": sliding_layers_of(layer_types, n),
    }


def _qwen3_gguf_fields(_m: GgufMeta) -> dict[str, Any]:
    return {"hidden_act": "silu", "attention_bias": False, "use_sliding_window": False}


QWEN3 = FamilyAdapter(
    name="qwen3",
    model_types=("qwen3",),
    arch_classes=("Qwen3ForCausalLM",),
    read_fields=qwen3_attention_fields,
    gguf=GgufArchitecture(
        "qwen3", "Qwen3ForCausalLM", "qwen3", {**LLAMA_LAYER, **QK_NORMS}, _qwen3_gguf_fields
    ),
)
