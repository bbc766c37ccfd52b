"""generate_local: a chain of shards in one process generates what transformers generates."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from core.errors import ConfigError
from core.runtime import SamplingParams, Shard, generate_local
from tests.core.runtime.conftest import reference_model


def test_greedy_chain_generation_equals_transformers_generate(tiny_qwen2: Path) -> None:
    prompt = [5, 17, 99, 3, 42]
    shards = [
        Shard.load(tiny_qwen2, 0, 1),
        Shard.load(tiny_qwen2, 1, 3),
        Shard.load(tiny_qwen2, 3, 4),
    ]
    ours = list(generate_local(shards, prompt, 20))
    with torch.inference_mode():
        ref = reference_model(tiny_qwen2).generate(
            torch.tensor([prompt]),
            max_new_tokens=20,
            do_sample=False,
            min_new_tokens=20,
            pad_token_id=0,
        )
    assert ours == ref[0, len(prompt) :].tolist()


def test_generation_stops_after_a_stop_id(tiny_llama: Path) -> None:
    shards = [Shard.load(tiny_llama, 0, 4)]
    free = list(generate_local(shards, [1, 2, 3], 10))
    stopped = list(generate_local(shards, [1, 2, 3], 10, stop_ids={free[2]}))
    assert stopped == free[: free.index(free[2]) + 1]


def test_seeded_chain_sampling_is_reproducible(tiny_llama: Path) -> None:
    shards = [Shard.load(tiny_llama, 0, 2), Shard.load(tiny_llama, 2, 4)]
    params = SamplingParams(temperature=1.0, top_p=0.9, seed=7)
    assert list(generate_local(shards, [4, 4], 12, params)) == list(
        generate_local(shards, [4, 4], 12, params)
    )


def test_a_chain_with_a_hole_is_refused(tiny_llama: Path) -> None:
    shards = [Shard.load(tiny_llama, 0, 1), Shard.load(tiny_llama, 2, 4)]
    with pytest.raises(ConfigError, match="should start at layer 1"):
        list(generate_local(shards, [1], 3))
