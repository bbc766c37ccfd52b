"""The real default model (SmolLM2-135M): a 2-shard chain generates what transformers does."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from core.runtime import Shard, generate_local

PROMPT = "Write a long story about a dragon who learns to bake bread."


@pytest.mark.slow
def test_two_shard_greedy_generation_equals_transformers_generate(
    default_model_dir: Path,
) -> None:
    from transformers import AutoModelForCausalLM

    from core.models.tokenizer import ChatTokenizer

    tok = ChatTokenizer.from_folder(default_model_dir)
    ids = tok.encode(tok.apply_chat_template([{"role": "user", "content": PROMPT}]))
    shards = [Shard.load(default_model_dir, 0, 15), Shard.load(default_model_dir, 15, 30)]
    assert shards[0].config.num_layers == 30 and shards[1].is_last
    ours = list(generate_local(shards, ids, 32, stop_ids=set(tok.eos_token_ids)))

    model = AutoModelForCausalLM.from_pretrained(default_model_dir, dtype=torch.float32).eval()
    with torch.inference_mode():
        out = model.generate(torch.tensor([ids]), max_new_tokens=32, do_sample=False)
    reference = out[0, len(ids) :].tolist()
    assert len(reference) == 32  # the prompt asks for a long answer: no early stop
    assert ours == reference
