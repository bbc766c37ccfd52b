"""What a family's GGUF file is in Hugging Face terms: the shared part of the table.

llama.cpp's converter (convert_hf_to_gguf.py) renames tensors and changes a few
on the way; each family adapter that reads GGUF files declares a
``GgufArchitecture`` (its ``general.architecture``, layer tensor map, field
reader and fixups) from the pieces here. ``core.runtime.gguf_arch`` turns a file
into a config.json with the adapter that claims it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

LLAMA_NORMS = {
    "attn_norm.weight": "input_layernorm.weight",
    "ffn_norm.weight": "post_attention_layernorm.weight",
}
# Gemma's sandwich: llama.cpp's ffn_norm is the norm *before* the MLP
GEMMA_NORMS = {
    "attn_norm.weight": "input_layernorm.weight",
    "post_attention_norm.weight": "post_attention_layernorm.weight",
    "ffn_norm.weight": "pre_feedforward_layernorm.weight",
    "post_ffw_norm.weight": "post_feedforward_layernorm.weight",
}
ATTENTION = {
    "attn_q.weight": "self_attn.q_proj.weight",
    "attn_k.weight": "self_attn.k_proj.weight",
    "attn_v.weight": "self_attn.v_proj.weight",
    "attn_output.weight": "self_attn.o_proj.weight",
}
BIASES = {
    "attn_q.bias": "self_attn.q_proj.bias",
    "attn_k.bias": "self_attn.k_proj.bias",
    "attn_v.bias": "self_attn.v_proj.bias",
}
QK_NORMS = {
    "attn_q_norm.weight": "self_attn.q_norm.weight",
    "attn_k_norm.weight": "self_attn.k_norm.weight",
}
MLP = {
    "ffn_gate.weight": "mlp.gate_proj.weight",
    "ffn_up.weight": "mlp.up_proj.weight",
    "ffn_down.weight": "mlp.down_proj.weight",
}
LLAMA_LAYER = {**LLAMA_NORMS, **ATTENTION, **MLP}
_GLOBAL = {
    "token_embd.weight": "model.embed_tokens.weight",
    "output_norm.weight": "model.norm.weight",
    "output.weight": "lm_head.weight",
}

Fields = Callable[["GgufMeta"], dict[str, Any]]


class GgufMeta:
    """Typed reads of one architecture's ``<arch>.*`` metadata keys."""

    def __init__(self, reader: Any, arch: str) -> None:
        self.reader = reader
        self.arch = arch

    def get(self, key: str, default: Any = None) -> Any:
        field = self.reader.fields.get(key)
        return default if field is None else field.contents()

    def arch_key(self, key: str, default: Any = None) -> Any:
        return self.get(f"{self.arch}.{key}", default)

    def has_tensor(self, name: str) -> bool:
        return any(t.name == name for t in self.reader.tensors)


def head_dim(m: GgufMeta) -> int:
    hidden, heads = int(m.arch_key("embedding_length")), int(m.arch_key("attention.head_count"))
    return int(m.arch_key("attention.key_length", hidden // heads))


@dataclass(frozen=True)
class GgufArchitecture:
    name: str  # general.architecture
    hf_class: str
    model_type: str
    layer_tensors: dict[str, str]
    fields: Fields  # the family's own config.json fields
    permute_qk: bool = False
    norm_shift: float = 0.0  # subtracted from every "*norm.weight"

    def hf_name(self, gguf_name: str) -> str | None:
        if gguf_name in _GLOBAL:
            return _GLOBAL[gguf_name]
        if gguf_name.startswith("blk."):
            _, index, rest = gguf_name.split(".", 2)
            if rest in self.layer_tensors:
                return f"model.layers.{int(index)}.{self.layer_tensors[rest]}"
        return None

    def convert(self, hf_name: str, weight: torch.Tensor, config: dict[str, Any]) -> torch.Tensor:
        """Undo what llama.cpp's converter did to this tensor."""
        if self.permute_qk and hf_name.endswith("q_proj.weight"):
            return unpermute_rotary(weight, config["num_attention_heads"])
        if self.permute_qk and hf_name.endswith("k_proj.weight"):
            return unpermute_rotary(weight, config["num_key_value_heads"])
        if self.norm_shift and hf_name.endswith("norm.weight"):
            return weight - self.norm_shift
        return weight


def unpermute_rotary(weight: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Undo llama.cpp's q/k row permutation (interleaved halves -> HF's split halves)."""
    rows = weight.shape[0]
    return (
        weight.reshape(n_heads, rows // n_heads // 2, 2, *weight.shape[1:])
        .transpose(1, 2)
        .reshape(weight.shape)
    )
