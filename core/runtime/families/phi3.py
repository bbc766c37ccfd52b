"""Phi-3: the Llama block with q|k|v and gate|up already fused in the checkpoint."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.runtime.families.base import FamilyAdapter, TensorLayout, window_everywhere


def _phi3_fields(d: Mapping[str, Any], common: Mapping[str, Any]) -> dict[str, Any]:
    # long-context "longrope" scaling and partial rotary are refused by rope_config
    return window_everywhere(d, common)


PHI3 = FamilyAdapter(
    name="phi3",
    model_types=("phi3",),
    arch_classes=("Phi3ForCausalLM",),
    read_fields=_phi3_fields,
    layout=TensorLayout(fused_qkv=True, fused_gate_up=True),
)
