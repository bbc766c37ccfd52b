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

from core.runtime.families.base import FamilyAdapter, refuse, sliding_layers_of
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


GEMMA2 = FamilyAdapter(
    name="gemma2",
    model_types=("gemma2",),
    arch_classes=("Gemma2ForCausalLM",),
    read_fields=_gemma2_fields,
    activations=("gelu_pytorch_tanh",),
)
GEMMA3 = FamilyAdapter(
    name="gemma3",
    model_types=("gemma3_text",),
    arch_classes=("Gemma3ForCausalLM",),
    read_fields=_gemma3_fields,
    activations=("gelu_pytorch_tanh",),
    per_layer_rope=True,
)
