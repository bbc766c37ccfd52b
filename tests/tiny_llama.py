"""One builder for the tiny random Llama folders the tests stand shards on.

Built with transformers' own ``save_pretrained``, so the runtime loads exactly
the names and layout a hub model has; callers add the tokenizer they need.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def save_tiny_llama(
    folder: Path,
    *,
    layers: int = 4,
    vocab: int = 96,
    hidden: int = 64,
    max_positions: int = 256,
    tie: bool = False,
    seed: int = 0,
    **config: Any,
) -> Path:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    settings: dict[str, Any] = {
        "vocab_size": vocab,
        "hidden_size": hidden,
        "intermediate_size": 2 * hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": max_positions,
        "tie_word_embeddings": tie,
    }
    settings.update(config)
    LlamaForCausalLM(LlamaConfig(**settings)).save_pretrained(folder, safe_serialization=True)
    return folder
