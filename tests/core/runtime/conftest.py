"""Tiny random Hugging Face models written to disk, the reference for the runtime.

Each folder is what ``save_pretrained`` writes (config.json + safetensors), so
the runtime loads exactly the tensor names and config fields a hub model has.
Built once per test session: 4 layers, hidden 64, vocab 256, 4 heads, 2 kv heads.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
import torch

TINY: dict[str, Any] = dict(
    vocab_size=256,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=4,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=512,
    rms_norm_eps=1e-5,
)


def build_tiny(folder: Path, kind: str = "llama", seed: int = 0, **overrides: Any) -> Path:
    """Save a random tiny model of `kind` ("llama" | "qwen2" | "mistral") into folder."""
    from transformers import (
        LlamaConfig,
        LlamaForCausalLM,
        MistralConfig,
        MistralForCausalLM,
        Qwen2Config,
        Qwen2ForCausalLM,
    )

    torch.manual_seed(seed)
    params = {**TINY, **overrides}
    max_shard_size = params.pop("max_shard_size", None)
    if kind == "qwen2":
        model: Any = Qwen2ForCausalLM(Qwen2Config(**params))
    elif kind == "mistral":
        model = MistralForCausalLM(MistralConfig(**params))
    else:
        model = LlamaForCausalLM(LlamaConfig(**params))
    # random init leaves norms at 1.0; perturb them so a norm bug cannot hide
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name or name.endswith("bias"):
                p.add_(torch.randn_like(p) * 0.1)
    kwargs: dict[str, Any] = {"safe_serialization": True}
    if max_shard_size is not None:
        kwargs["max_shard_size"] = max_shard_size
    model.save_pretrained(folder, **kwargs)
    return folder


@pytest.fixture(scope="session")
def tiny_llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny(tmp_path_factory.mktemp("tiny-llama"), tie_word_embeddings=True)


@pytest.fixture(scope="session")
def tiny_qwen2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny(
        tmp_path_factory.mktemp("tiny-qwen2"), "qwen2", seed=1, tie_word_embeddings=True
    )


@pytest.fixture(scope="session")
def tiny_llama3_rope(tmp_path_factory: pytest.TempPathFactory) -> Path:
    scaling = {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 32,
    }
    return build_tiny(
        tmp_path_factory.mktemp("tiny-llama3"),
        seed=2,
        rope_scaling=scaling,
        rope_theta=500000.0,
        tie_word_embeddings=True,
    )


@pytest.fixture(scope="session")
def tiny_linear_rope(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny(
        tmp_path_factory.mktemp("tiny-linear"),
        seed=5,
        rope_scaling={"rope_type": "linear", "factor": 4.0},
    )


@pytest.fixture(scope="session")
def tiny_mistral(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny(
        tmp_path_factory.mktemp("tiny-mistral"), "mistral", seed=6, sliding_window=None, head_dim=16
    )


@pytest.fixture(scope="session")
def tiny_llama_biased(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Llama with attention_bias=True: q, k, v and o projections all carry a bias."""
    return build_tiny(tmp_path_factory.mktemp("tiny-biased"), seed=7, attention_bias=True)


@pytest.fixture(scope="session")
def tiny_untied(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny(tmp_path_factory.mktemp("tiny-untied"), seed=3, tie_word_embeddings=False)


@pytest.fixture(scope="session")
def tiny_multifile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny(
        tmp_path_factory.mktemp("tiny-multifile"),
        seed=4,
        tie_word_embeddings=False,
        max_shard_size="100KB",
    )


@functools.lru_cache(maxsize=8)
def reference_model(folder: Path) -> Any:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    return model.eval()


def reference_logits(folder: Path, ids: torch.Tensor) -> torch.Tensor:
    """transformers' full-model logits (B, T, V) float32."""
    with torch.inference_mode():
        return reference_model(folder)(ids).logits.float()
