"""Gemma 2 and Gemma 3 (text): the Llama block with Gemma's changes.

* RMSNorm scales by (1 + w) (folded into w at load), around attention and MLP alike;
* GeGLU (gelu_pytorch_tanh), embeddings times sqrt(hidden);
* attention scale query_pre_attn_scalar ** -0.5, sliding-window and global layers
  (``layer_types``), soft-capped attention scores and logits where the config says;
* Gemma 3 adds q/k norms and its own RoPE base for the sliding layers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from core.errors import UnsupportedArchitecture
from core.runtime.families.base import FamilyAdapter, refuse, sliding_layers_of
from core.runtime.families.gguf import (
    ATTENTION,
    GEMMA_NORMS,
    MLP,
    QK_NORMS,
    GgufArchitecture,
    GgufMeta,
    head_dim,
)
from core.runtime.rope_config import layer_type_rope_params, rope_scaling, rope_theta


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _layer_types(d: Mapping[str, Any], n: int, pattern: int) -> list[Any]:
    layer_types = d.get("layer_types")
    if layer_types is None:  # transformers' default: every pattern-th layer is global
        layer_types = [
            "sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(n)
        ]
    return list(layer_types)


def _gemma_fields(d: Mapping[str, Any], common: Mapping[str, Any], pattern: int) -> dict[str, Any]:
    n = common["num_layers"]
    act = d.get("hidden_activation") or d.get("hidden_act") or "gelu_pytorch_tanh"
    fields: dict[str, Any] = {
        "hidden_act": act,
        "sandwich_norms": True,
        "norm_offset": 1.0,
        "embed_scale": math.sqrt(common["hidden_size"]),
        "query_scale": float(d.get("query_pre_attn_scalar", common["head_dim"])) ** -0.5,
        "attn_softcap": _optional_float(d.get("attn_logit_softcapping")),
        "final_softcap": _optional_float(d.get("final_logit_softcapping")),
        "attention_out_bias": bool(d.get("attention_bias", False)),
    }
    window = d.get("sliding_window")
    if window is not None:
        fields["sliding_window"] = int(window)
        fields["sliding_layers"] = sliding_layers_of(_layer_types(d, n, pattern), n)
    return fields


def _gemma2_fields(d: Mapping[str, Any], common: Mapping[str, Any]) -> dict[str, Any]:
    return _gemma_fields(d, common, pattern=2)


def _gemma3_fields(d: Mapping[str, Any], common: Mapping[str, Any]) -> dict[str, Any]:
    if d.get("use_bidirectional_attention"):
        refuse("use_bidirectional_attention", True, "only causal decoding is computed")
    pattern = int(d.get("sliding_window_pattern") or d.get("_sliding_window_pattern") or 6)
    fields = _gemma_fields(d, common, pattern)
    fields["qk_norm"] = True
    local = layer_type_rope_params(d, "sliding_attention")
    if local is not None:  # transformers 5: one rope mapping per layer type
        fields["local_rope_theta"] = rope_theta(local, d)
        fields["local_rope_scaling"] = rope_scaling(local)
    else:  # older configs: rope_local_base_freq, no scaling on the local layers
        fields["local_rope_theta"] = float(d.get("rope_local_base_freq", 10000.0))
    return fields


def _gguf_query_scalar(m: GgufMeta, large_layers: int) -> float:
    # llama.cpp: the 27B models scale by hidden/heads, the others by head_dim
    layers = int(m.arch_key("block_count"))
    if layers == large_layers:
        return int(m.arch_key("embedding_length")) / int(m.arch_key("attention.head_count"))
    return float(head_dim(m))


def _gguf_layer_types(m: GgufMeta, pattern: int) -> list[str]:
    n = int(m.arch_key("block_count"))
    return ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(n)]


def _gemma2_gguf_fields(m: GgufMeta) -> dict[str, Any]:
    return {
        "hidden_activation": "gelu_pytorch_tanh",
        "query_pre_attn_scalar": _gguf_query_scalar(m, large_layers=46),
        "sliding_window": int(m.arch_key("attention.sliding_window", 4096)),
        "layer_types": _gguf_layer_types(m, 2),
        "attn_logit_softcapping": m.arch_key("attn_logit_softcapping"),
        "final_logit_softcapping": m.arch_key("final_logit_softcapping"),
        "attention_bias": False,
    }


def _gemma3_gguf_fields(m: GgufMeta) -> dict[str, Any]:
    """Fields the file does not carry take llama.cpp's values (local RoPE base 10000,
    every 6th layer global)."""
    scaling = None
    if m.arch_key("rope.scaling.type") == "linear":  # the 4B+ models' global layers
        scaling = {"rope_type": "linear", "factor": float(m.arch_key("rope.scaling.factor"))}
    elif m.arch_key("rope.scaling.type") not in (None, "none"):
        raise UnsupportedArchitecture(
            f"Gemma 3 RoPE scaling {m.arch_key('rope.scaling.type')!r} is not supported"
        )
    return {
        "hidden_activation": "gelu_pytorch_tanh",
        "query_pre_attn_scalar": _gguf_query_scalar(m, large_layers=62),
        "sliding_window": int(m.arch_key("attention.sliding_window", 4096)),
        "sliding_window_pattern": 6,
        "layer_types": _gguf_layer_types(m, 6),
        "rope_local_base_freq": 10000.0,
        "rope_scaling": scaling,
        "attn_logit_softcapping": None,
        "final_logit_softcapping": m.arch_key("final_logit_softcapping"),
        "attention_bias": False,
        "use_bidirectional_attention": False,
    }


# llama.cpp stores every RMSNorm weight as (1 + w): 1 is subtracted, so the folder holds
# what transformers' Gemma modules expect (they add the 1 back)
GEMMA2 = FamilyAdapter(
    name="gemma2",
    model_types=("gemma2",),
    arch_classes=("Gemma2ForCausalLM",),
    read_fields=_gemma2_fields,
    activations=("gelu_pytorch_tanh",),
    gguf=GgufArchitecture(
        "gemma2",
        "Gemma2ForCausalLM",
        "gemma2",
        {**GEMMA_NORMS, **ATTENTION, **MLP},
        _gemma2_gguf_fields,
        norm_shift=1.0,
    ),
    gemma_vocabulary=True,
)
GEMMA3 = FamilyAdapter(
    name="gemma3",
    model_types=("gemma3_text",),
    arch_classes=("Gemma3ForCausalLM",),
    read_fields=_gemma3_fields,
    activations=("gelu_pytorch_tanh",),
    per_layer_rope=True,
    gguf=GgufArchitecture(
        "gemma3",
        "Gemma3ForCausalLM",
        "gemma3_text",
        {**GEMMA_NORMS, **ATTENTION, **QK_NORMS, **MLP},
        _gemma3_gguf_fields,
        norm_shift=1.0,
    ),
    gemma_vocabulary=True,
)
