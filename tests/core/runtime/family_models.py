"""Tiny random models of every family the runtime computes, saved by transformers.

4 layers, hidden 64, vocab 256, 4 heads over 2 kv heads; windows of 8 positions
so a 40-token prompt crosses them; caps small enough to bite on random weights
(removing any one feature moves the logits by far more than the tolerance).
Norms and biases are perturbed (random init leaves them constant, hiding bugs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from tests.core.runtime.conftest import TINY

WINDOW = 8
_LLAMA3_ROPE = {
    "rope_type": "llama3",
    "rope_theta": 500000.0,
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 32,
}


def _specs() -> dict[str, tuple[Any, Any, dict[str, Any]]]:
    import transformers as tf

    return {
        # Llama 3.2: tied embeddings and llama3 rope scaling
        "llama3_2": (
            tf.LlamaConfig,
            tf.LlamaForCausalLM,
            {"tie_word_embeddings": True, "rope_parameters": _LLAMA3_ROPE, "head_dim": 16},
        ),
        "qwen3": (
            tf.Qwen3Config,
            tf.Qwen3ForCausalLM,
            {"head_dim": 16, "tie_word_embeddings": True},
        ),
        "qwen3_sliding": (
            tf.Qwen3Config,
            tf.Qwen3ForCausalLM,
            {
                "head_dim": 16,
                "use_sliding_window": True,
                "sliding_window": WINDOW,
                "max_window_layers": 2,
            },
        ),
        "mistral_sliding": (
            tf.MistralConfig,
            tf.MistralForCausalLM,
            {"head_dim": 16, "sliding_window": WINDOW},
        ),
        "phi3": (
            tf.Phi3Config,
            tf.Phi3ForCausalLM,
            {"sliding_window": WINDOW, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2},
        ),
        "gemma2": (
            tf.Gemma2Config,
            tf.Gemma2ForCausalLM,
            {
                "head_dim": 16,
                "sliding_window": WINDOW,
                "query_pre_attn_scalar": 24,
                "attn_logit_softcapping": 0.05,  # random scores are small: a cap that bites
                "final_logit_softcapping": 3.0,
            },
        ),
        "gemma3": (
            tf.Gemma3TextConfig,
            tf.Gemma3ForCausalLM,
            {
                "head_dim": 16,
                "sliding_window": WINDOW,
                "layer_types": [
                    "sliding_attention",
                    "sliding_attention",
                    "full_attention",
                    "sliding_attention",
                ],
                "rope_parameters": {
                    "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                    "full_attention": {"rope_type": "linear", "factor": 2.0, "rope_theta": 1e6},
                },
                "final_logit_softcapping": 3.0,
            },
        ),
        "mixtral": (
            tf.MixtralConfig,
            tf.MixtralForCausalLM,
            {"num_local_experts": 4, "num_experts_per_tok": 2, "head_dim": 16},
        ),
        "qwen3_moe": (
            tf.Qwen3MoeConfig,
            tf.Qwen3MoeForCausalLM,
            {
                "num_experts": 4,
                "num_experts_per_tok": 2,
                "moe_intermediate_size": 32,
                "head_dim": 16,
                "norm_topk_prob": True,
            },
        ),
    }


FAMILY_MODELS = (
    "llama3_2",
    "qwen3",
    "qwen3_sliding",
    "mistral_sliding",
    "phi3",
    "gemma2",
    "gemma3",
    "mixtral",
    "qwen3_moe",
)


def build_family_model(folder: Path, name: str, seed: int = 11) -> Path:
    config_cls, model_cls, overrides = _specs()[name]
    torch.manual_seed(seed)
    params = {**TINY, **overrides}
    model = model_cls(config_cls(**params))
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if "norm" in pname or pname.endswith("bias"):
                p.add_(torch.randn_like(p) * 0.1)
    model.save_pretrained(folder)
    return folder
