"""Mixtral and Qwen3-MoE: the MLP is a mixture of experts with top-k routing.

A node holds whole layers, every expert of them included; routing is local.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.runtime.families.base import FamilyAdapter, TensorLayout, refuse, window_everywhere
from core.runtime.families.qwen3 import qwen3_attention_fields


def _experts(num: Any, per_token: Any) -> dict[str, Any]:
    n, k = int(num), int(per_token)
    if not 0 < k <= n:
        refuse("num_experts_per_tok", k, f"it must lie in [1, {n}] for {n} experts")
    return {"num_experts": n, "experts_per_token": k}


def _mixtral_fields(d: Mapping[str, Any], common: Mapping[str, Any]) -> dict[str, Any]:
    return {
        **window_everywhere(d, common),
        **_experts(d["num_local_experts"], d["num_experts_per_tok"]),
        "expert_intermediate_size": common["intermediate_size"],
        "norm_topk_prob": True,
    }


def _qwen3_moe_fields(d: Mapping[str, Any], common: Mapping[str, Any]) -> dict[str, Any]:
    if d.get("mlp_only_layers"):
        refuse("mlp_only_layers", d["mlp_only_layers"], "every layer must be a mixture of experts")
    if int(d.get("decoder_sparse_step", 1)) != 1:
        refuse("decoder_sparse_step", d["decoder_sparse_step"], "only 1 (every layer) is computed")
    fields = qwen3_attention_fields(d, common)
    fields.pop("sliding_layers", None)
    if "sliding_window" in fields:  # Qwen3-MoE's window covers every layer
        fields["sliding_layers"] = tuple(range(common["num_layers"]))
    return {
        **fields,
        **_experts(d.get("num_experts", d.get("num_local_experts")), d["num_experts_per_tok"]),
        "expert_intermediate_size": int(d["moe_intermediate_size"]),
        "norm_topk_prob": bool(d.get("norm_topk_prob", False)),
    }


MIXTRAL = FamilyAdapter(
    name="mixtral",
    model_types=("mixtral",),
    arch_classes=("MixtralForCausalLM",),
    read_fields=_mixtral_fields,
    layout=TensorLayout(moe="mixtral"),
)
QWEN3_MOE = FamilyAdapter(
    name="qwen3_moe",
    model_types=("qwen3_moe",),
    arch_classes=("Qwen3MoeForCausalLM",),
    read_fields=_qwen3_moe_fields,
    layout=TensorLayout(moe="qwen"),
)
