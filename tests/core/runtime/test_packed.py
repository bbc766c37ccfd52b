"""The packed LM head and the (in, out) weight layout compute what nn.Linear computes."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from core.runtime.packed import PackedLinear, packing_available
from core.runtime.shard import Shard
from core.runtime.weights import WeightSource

needs_onednn = pytest.mark.skipif(not packing_available(), reason="no oneDNN in this torch")


@needs_onednn
def test_packed_linear_equals_linear_and_rows_are_independent() -> None:
    torch.manual_seed(0)
    linear = nn.Linear(64, 300, bias=True)
    packed = PackedLinear.try_from(linear)
    assert packed is not None and packed.weight_bytes == 300 * 64 * 4
    x = torch.randn(8, 64)
    with torch.inference_mode():
        torch.testing.assert_close(packed.matmul(x), linear(x), rtol=1e-5, atol=1e-5)
        # a row's result does not depend on the other rows of its batch
        for i in range(8):
            assert torch.equal(packed.matmul(x[i : i + 1]), packed.matmul(x)[i : i + 1])


def test_cpu_shard_weights_keep_their_values_in_the_in_by_out_layout(tiny_llama: Path) -> None:
    shard = Shard.load(tiny_llama, 0, 2)
    qkv = shard.layers[0].attn.qkv.weight
    assert qkv.t().is_contiguous() and not qkv.is_contiguous()
    names = ("model.layers.0.self_attn.q_proj.weight",)
    q = WeightSource(tiny_llama).load(list(names))[names[0]]
    assert torch.equal(qkv[: q.shape[0]], q.float())


def test_untied_last_shard_packs_its_head_and_counts_its_bytes(tiny_llama: Path) -> None:
    n = Shard.load(tiny_llama, 0, 1).config.num_layers
    last = Shard.load(tiny_llama, 1, n)  # tied in the model, but this shard has no embedding
    if packing_available():
        assert isinstance(last.lm_head, PackedLinear)
        H, V = last.config.hidden_size, last.config.vocab_size
        assert last.weight_bytes() >= V * H * 4
    x = torch.randn(3, 1, last.config.hidden_size)
    with torch.inference_mode():
        assert last.head(x).shape == (3, 1, last.config.vocab_size)
