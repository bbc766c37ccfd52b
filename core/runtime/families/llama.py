"""Llama (2, 3, 3.2, SmolLM), Mistral and Qwen2: the plain pre-norm SwiGLU block."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.errors import UnsupportedArchitecture
from core.runtime.families.base import FamilyAdapter, refuse, window_everywhere
from core.runtime.families.gguf import BIASES, LLAMA_LAYER, GgufArchitecture, GgufMeta


def _refuse_active_window(
    d: Mapping[str, Any], common: Mapping[str, Any], *, used_by_default: bool, why: str
) -> None:
    """Refuse a sliding window shorter than the context (one that would change the
    output) on a family computed here with full attention only."""
    window = d.get("sliding_window")
    if (
        window is not None
        and d.get("use_sliding_window", used_by_default)
        and int(window) < common["max_position_embeddings"]
    ):
        refuse("sliding_window", window, why, reason="unsupported-sliding-window")


def _llama_fields(d: Mapping[str, Any], common: Mapping[str, Any]) -> dict[str, Any]:
    bias = bool(d.get("attention_bias", False))
    fields: dict[str, Any] = {"attention_out_bias": bias}
    if d.get("model_type") == "mistral" or "MistralForCausalLM" in (d.get("architectures") or ()):
        return {**fields, **window_everywhere(d, common)}
    # transformers' Llama ignores a sliding_window field; one that would matter is refused
    _refuse_active_window(
        d,
        common,
        used_by_default=True,
        why=f"it is active (max_position_embeddings {common['max_position_embeddings']}) "
        "on a model_type the reference computes with full attention",
    )
    return fields


def _qwen2_fields(d: Mapping[str, Any], common: Mapping[str, Any]) -> dict[str, Any]:
    _refuse_active_window(
        d,
        common,
        used_by_default=False,
        why="Qwen2's sliding window (max_window_layers) is not computed; full attention only",
    )
    return {"attention_bias": True, "attention_out_bias": False}  # q/k/v bias, o without


def _llama_gguf_fields(m: GgufMeta) -> dict[str, Any]:
    if m.has_tensor("rope_freqs.weight"):
        raise UnsupportedArchitecture(
            "this Llama GGUF carries llama.cpp's rope_freqs tensor (Llama 3.1+ long-context "
            "RoPE scaling), whose parameters the file does not state; import the model from "
            "its Hugging Face folder instead"
        )
    return {"hidden_act": "silu", "attention_bias": False, "mlp_bias": False}


def _qwen2_gguf_fields(_m: GgufMeta) -> dict[str, Any]:
    return {"hidden_act": "silu", "use_sliding_window": False}


LLAMA = FamilyAdapter(
    name="llama",
    model_types=("llama", "mistral"),
    arch_classes=("LlamaForCausalLM", "MistralForCausalLM"),
    read_fields=_llama_fields,
    # llama.cpp permutes Llama's q/k rows for its interleaved RoPE: permuted back
    gguf=GgufArchitecture(
        "llama", "LlamaForCausalLM", "llama", LLAMA_LAYER, _llama_gguf_fields, permute_qk=True
    ),
)
QWEN2 = FamilyAdapter(
    name="qwen2",
    model_types=("qwen2",),
    arch_classes=("Qwen2ForCausalLM",),
    read_fields=_qwen2_fields,
    gguf=GgufArchitecture(
        "qwen2", "Qwen2ForCausalLM", "qwen2", {**LLAMA_LAYER, **BIASES}, _qwen2_gguf_fields
    ),
)
