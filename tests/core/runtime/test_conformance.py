"""A chain of shards reproduces transformers' full-model logits."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from core.runtime import Shard
from tests.core.runtime.chain import logits_through
from tests.core.runtime.conftest import reference_logits

SPLITS = {2: [(0, 2), (2, 4)], 3: [(0, 1), (1, 3), (3, 4)], 1: [(0, 4)]}


def logits_over(folder: Path, ranges: list[tuple[int, int]], ids: torch.Tensor) -> torch.Tensor:
    return logits_through([Shard.load(folder, a, b) for a, b in ranges], ids)


def prompt(batch: int = 1, length: int = 12, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, (batch, length), generator=g)


@pytest.mark.parametrize("n_shards", [1, 2, 3])
@pytest.mark.parametrize("model", ["tiny_llama", "tiny_qwen2"])
def test_shard_chain_reproduces_transformers_logits(
    model: str, n_shards: int, request: pytest.FixtureRequest
) -> None:
    folder = request.getfixturevalue(model)
    ids = prompt(batch=2)
    torch.testing.assert_close(
        logits_over(folder, SPLITS[n_shards], ids),
        reference_logits(folder, ids),
        rtol=1e-4,
        atol=1e-4,
    )


@pytest.mark.parametrize(
    "model",
    [
        "tiny_llama3_rope",
        "tiny_linear_rope",
        "tiny_untied",
        "tiny_multifile",
        "tiny_mistral",
        "tiny_llama_biased",
    ],
)
def test_two_shard_chain_matches_transformers_for_config_variants(
    model: str, request: pytest.FixtureRequest
) -> None:
    folder = request.getfixturevalue(model)
    ids = prompt(length=40, seed=1)  # past original_max_position_embeddings=32 for llama3
    torch.testing.assert_close(
        logits_over(folder, SPLITS[2], ids), reference_logits(folder, ids), rtol=1e-4, atol=1e-4
    )
