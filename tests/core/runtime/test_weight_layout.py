"""CPU shards store float projections (in, out)-contiguous: same values, same shapes."""

from __future__ import annotations

from pathlib import Path

import torch

from core.runtime.shard import Shard
from core.runtime.weights import WeightSource


def test_cpu_shard_weights_keep_their_values_in_the_in_by_out_layout(tiny_llama: Path) -> None:
    shard = Shard.load(tiny_llama, 0, 2)
    qkv = shard.layers[0].attn.qkv.weight
    assert qkv.t().is_contiguous() and not qkv.is_contiguous()
    name = "model.layers.0.self_attn.q_proj.weight"
    q = WeightSource(tiny_llama).load([name])[name]
    assert torch.equal(qkv[: q.shape[0]], q.float())


def test_an_untied_head_is_relaid_and_a_tied_one_is_shared(tiny_llama: Path) -> None:
    n = Shard.load(tiny_llama, 0, 1).config.num_layers
    last = Shard.load(tiny_llama, 1, n)  # tied in the model, but this shard has no embedding
    whole = Shard.load(tiny_llama, 0, n)
    assert last.lm_head is not None and last.lm_head.weight.t().is_contiguous()
    assert whole.lm_head is not None and whole.embed is not None
    assert whole.lm_head.weight is whole.embed.weight  # one tensor, counted once
    H, V = last.config.hidden_size, last.config.vocab_size
    x = torch.randn(3, 1, H)
    with torch.inference_mode():
        logits = last.head(x)
        assert logits.shape == (3, 1, V)
        # a row's logits do not depend on the other rows beyond float rounding
        torch.testing.assert_close(logits[1:2], last.head(x[1:2]), rtol=1e-5, atol=1e-5)
