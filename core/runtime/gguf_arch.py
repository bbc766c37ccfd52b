"""What each GGUF architecture is in Hugging Face terms: its config.json and tensor names.

llama.cpp's converter (convert_hf_to_gguf.py) renames tensors and changes a few
on the way; each family adapter declares how to undo it for its
``general.architecture`` (``FamilyAdapter.gguf``, core/runtime/families/):

* llama: q/k rows permuted for llama.cpp's interleaved RoPE -> permuted back;
* gemma2/gemma3: every RMSNorm weight stored as (1 + w) -> 1 subtracted, so the
  folder holds what transformers' Gemma modules expect (they add the 1 back);
* qwen2, qwen3: stored as they are (llama.cpp computes them with NeoX RoPE).

Fields a GGUF does not carry are filled with llama.cpp's own values for that
architecture (Gemma 3: local RoPE base 10000, every 6th layer global).
"""

from __future__ import annotations

from typing import Any

from core.errors import UnsupportedArchitecture
from core.runtime.families import GGUF_FAMILIES
from core.runtime.families.gguf import GgufArchitecture, GgufMeta, head_dim, unpermute_rotary

__all__ = [
    "ARCHITECTURES",
    "GgufArchitecture",
    "GgufMeta",
    "architecture_of",
    "hf_config_from_gguf",
    "unpermute_rotary",
]

# Derived from the adapters: a GGUF architecture exists here only through its family.
ARCHITECTURES: dict[str, GgufArchitecture] = {
    name: adapter.gguf for name, adapter in GGUF_FAMILIES.items() if adapter.gguf is not None
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
        "head_dim": head_dim(m),
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
    if GGUF_FAMILIES[family.name].gemma_vocabulary and "<end_of_turn>" in tokens:
        # Gemma ends its chat turns with <end_of_turn>; Google's configs list both stops
        config["eos_token_id"] = [config["eos_token_id"], tokens.index("<end_of_turn>")]
    return config
