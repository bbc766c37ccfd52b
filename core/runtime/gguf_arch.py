"""What each GGUF architecture is in Hugging Face terms: its config.json and tensor names.

llama.cpp's converter (convert_hf_to_gguf.py) renames tensors and changes a few
on the way; this module undoes it per ``general.architecture``:

* llama: q/k rows permuted for llama.cpp's interleaved RoPE -> permuted back;
* gemma2/gemma3: every RMSNorm weight stored as (1 + w) -> 1 subtracted, so the
  folder holds what transformers' Gemma modules expect (they add the 1 back);
* qwen2, qwen3: stored as they are (llama.cpp computes them with NeoX RoPE).

Fields a GGUF does not carry are filled with llama.cpp's own values for that
architecture (Gemma 3: local RoPE base 10000, every 6th layer global).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from core.errors import UnsupportedArchitecture

_LLAMA_NORMS = {
    "attn_norm.weight": "input_layernorm.weight",
    "ffn_norm.weight": "post_attention_layernorm.weight",
}
# Gemma's sandwich: llama.cpp's ffn_norm is the norm *before* the MLP
_GEMMA_NORMS = {
    "attn_norm.weight": "input_layernorm.weight",
    "post_attention_norm.weight": "post_attention_layernorm.weight",
    "ffn_norm.weight": "pre_feedforward_layernorm.weight",
    "post_ffw_norm.weight": "post_feedforward_layernorm.weight",
}
_ATTENTION = {
    "attn_q.weight": "self_attn.q_proj.weight",
    "attn_k.weight": "self_attn.k_proj.weight",
    "attn_v.weight": "self_attn.v_proj.weight",
    "attn_output.weight": "self_attn.o_proj.weight",
}
_BIASES = {
    "attn_q.bias": "self_attn.q_proj.bias",
    "attn_k.bias": "self_attn.k_proj.bias",
    "attn_v.bias": "self_attn.v_proj.bias",
}
_QK_NORMS = {
    "attn_q_norm.weight": "self_attn.q_norm.weight",
    "attn_k_norm.weight": "self_attn.k_norm.weight",
}
_MLP = {
    "ffn_gate.weight": "mlp.gate_proj.weight",
    "ffn_up.weight": "mlp.up_proj.weight",
    "ffn_down.weight": "mlp.down_proj.weight",
}
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


def _llama_fields(m: GgufMeta) -> dict[str, Any]:
    if m.has_tensor("rope_freqs.weight"):
        raise UnsupportedArchitecture(
            "this Llama GGUF carries llama.cpp's rope_freqs tensor (Llama 3.1+ long-context "
            "RoPE scaling), whose parameters the file does not state; import the model from "
            "its Hugging Face folder instead"
        )
    return {"hidden_act": "silu", "attention_bias": False, "mlp_bias": False}


def _qwen2_fields(_m: GgufMeta) -> dict[str, Any]:
    return {"hidden_act": "silu", "use_sliding_window": False}


def _qwen3_fields(_m: GgufMeta) -> dict[str, Any]:
    return {"hidden_act": "silu", "attention_bias": False, "use_sliding_window": False}


def _gemma_query_scalar(m: GgufMeta, head_dim: int, large_layers: int) -> float:
    # llama.cpp: the 27B models scale by hidden/heads, the others by head_dim
    layers = int(m.arch_key("block_count"))
    if layers == large_layers:
        return int(m.arch_key("embedding_length")) / int(m.arch_key("attention.head_count"))
    return float(head_dim)


def _head_dim(m: GgufMeta) -> int:
    hidden, heads = int(m.arch_key("embedding_length")), int(m.arch_key("attention.head_count"))
    return int(m.arch_key("attention.key_length", hidden // heads))


def _gemma_layer_types(m: GgufMeta, pattern: int) -> list[str]:
    n = int(m.arch_key("block_count"))
    return ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(n)]


def _gemma2_fields(m: GgufMeta) -> dict[str, Any]:
    return {
        "hidden_activation": "gelu_pytorch_tanh",
        "query_pre_attn_scalar": _gemma_query_scalar(m, _head_dim(m), large_layers=46),
        "sliding_window": int(m.arch_key("attention.sliding_window", 4096)),
        "layer_types": _gemma_layer_types(m, 2),
        "attn_logit_softcapping": m.arch_key("attn_logit_softcapping"),
        "final_logit_softcapping": m.arch_key("final_logit_softcapping"),
        "attention_bias": False,
    }


def _gemma3_fields(m: GgufMeta) -> dict[str, Any]:
    scaling = None
    if m.arch_key("rope.scaling.type") == "linear":  # the 4B+ models' global layers
        scaling = {"rope_type": "linear", "factor": float(m.arch_key("rope.scaling.factor"))}
    elif m.arch_key("rope.scaling.type") not in (None, "none"):
        raise UnsupportedArchitecture(
            f"Gemma 3 RoPE scaling {m.arch_key('rope.scaling.type')!r} is not supported"
        )
    return {
        "hidden_activation": "gelu_pytorch_tanh",
        "query_pre_attn_scalar": _gemma_query_scalar(m, _head_dim(m), large_layers=62),
        "sliding_window": int(m.arch_key("attention.sliding_window", 4096)),
        "sliding_window_pattern": 6,
        "layer_types": _gemma_layer_types(m, 6),
        "rope_local_base_freq": 10000.0,
        "rope_scaling": scaling,
        "attn_logit_softcapping": None,
        "final_logit_softcapping": m.arch_key("final_logit_softcapping"),
        "attention_bias": False,
        "use_bidirectional_attention": False,
    }


_LLAMA_LAYER = {**_LLAMA_NORMS, **_ATTENTION, **_MLP}
ARCHITECTURES: dict[str, GgufArchitecture] = {
    a.name: a
    for a in (
        GgufArchitecture(
            "llama", "LlamaForCausalLM", "llama", _LLAMA_LAYER, _llama_fields, permute_qk=True
        ),
        GgufArchitecture(
            "qwen2", "Qwen2ForCausalLM", "qwen2", {**_LLAMA_LAYER, **_BIASES}, _qwen2_fields
        ),
        GgufArchitecture(
            "qwen3", "Qwen3ForCausalLM", "qwen3", {**_LLAMA_LAYER, **_QK_NORMS}, _qwen3_fields
        ),
        GgufArchitecture(
            "gemma2",
            "Gemma2ForCausalLM",
            "gemma2",
            {**_GEMMA_NORMS, **_ATTENTION, **_MLP},
            _gemma2_fields,
            norm_shift=1.0,
        ),
        GgufArchitecture(
            "gemma3",
            "Gemma3ForCausalLM",
            "gemma3_text",
            {**_GEMMA_NORMS, **_ATTENTION, **_QK_NORMS, **_MLP},
            _gemma3_fields,
            norm_shift=1.0,
        ),
    )
}


def architecture_of(reader: Any) -> GgufArchitecture:
    arch = GgufMeta(reader, "general").get("general.architecture")
    if arch not in ARCHITECTURES:
        raise UnsupportedArchitecture(
            f"the GGUF file holds a {arch!r} model; the importer reads "
            f"{', '.join(sorted(ARCHITECTURES))} GGUF files"
        )
    return ARCHITECTURES[arch]


def hf_config_from_gguf(reader: Any) -> dict[str, Any]:
    """The config.json transformers (and our runtime) would read for this file's model."""
    family = architecture_of(reader)
    m = GgufMeta(reader, family.name)
    heads = int(m.arch_key("attention.head_count"))
    tokens = m.get("tokenizer.ggml.tokens") or []
    tie = not m.has_tensor("output.weight")
    config: dict[str, Any] = {
        "architectures": [family.hf_class],
        "model_type": family.model_type,
        "vocab_size": int(m.arch_key("vocab_size", len(tokens))),
        "hidden_size": int(m.arch_key("embedding_length")),
        "intermediate_size": int(m.arch_key("feed_forward_length")),
        "num_hidden_layers": int(m.arch_key("block_count")),
        "num_attention_heads": heads,
        "num_key_value_heads": int(m.arch_key("attention.head_count_kv", heads)),
        "head_dim": _head_dim(m),
        "rms_norm_eps": float(m.arch_key("attention.layer_norm_rms_epsilon", 1e-6)),
        "rope_theta": float(m.arch_key("rope.freq_base", 10000.0)),
        "rope_scaling": None,
        "max_position_embeddings": int(m.arch_key("context_length", 2048)),
        "tie_word_embeddings": tie,
        "bos_token_id": m.get("tokenizer.ggml.bos_token_id"),
        "eos_token_id": m.get("tokenizer.ggml.eos_token_id"),
        "pad_token_id": m.get("tokenizer.ggml.padding_token_id"),
        "torch_dtype": "float32",
    }
    config.update(family.fields(m))
    if family.name.startswith("gemma") and "<end_of_turn>" in tokens:
        # Gemma ends its chat turns with <end_of_turn>; Google's configs list both stops
        config["eos_token_id"] = [config["eos_token_id"], tokens.index("<end_of_turn>")]
    return config
