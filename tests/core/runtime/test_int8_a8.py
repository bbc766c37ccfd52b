"""The catalogued int8 recipe, int8 weights and per-token int8 activations: exact
integer products, rows independent of their batch, conformance to its own reference,
and a session's tokens independent of its batch mates."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch
from torch import nn

from core.runtime import SessionManager, Shard, generate_local
from core.runtime.quant import INT8_PER_CHANNEL_A8, quantize_per_channel
from core.runtime.quant_a8 import Int8A8Linear, fbgemm_is_exact, quantize_rows
from tests.core.runtime.conftest import reference_model
from tests.core.runtime.test_batch import NEW_TOKENS, Chat, batched_decode, prompts

# A rounding of one activation that lands on the other side of .5 (the runtime and
# transformers sum attention in different orders) moves one product by one step.
ATOL, RTOL = 2e-3, 1e-3


class ReferenceA8(nn.Module):
    """What the scheme means, in float64: x rounded per row, times the rounded weight."""

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        self.q, self.scale = quantize_per_channel(linear.weight)
        self.bias = linear.bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x64 = x.double()
        s = x64.abs().amax(-1, keepdim=True).clamp_min(1e-30) / 127
        y = (torch.round(x64 / s) @ self.q.double().t()) * self.scale.double() * s
        return (y if self.bias is None else y + self.bias.double()).to(x.dtype)


def a8_reference(folder: Path) -> nn.Module:
    model = copy.deepcopy(reference_model(folder))
    for name, module in list(model.named_modules()):
        if isinstance(module, nn.Linear) and ("layers." in name or name == "lm_head"):
            parent, _, child = name.rpartition(".")
            setattr(model.get_submodule(parent) if parent else model, child, ReferenceA8(module))
    return model.eval()


def test_the_integer_product_is_exact_and_each_row_is_independent_of_its_batch() -> None:
    torch.manual_seed(0)
    w = torch.randn(700, 300) * 0.05
    x = torch.randn(33, 300) * torch.logspace(-2, 2, 33)[:, None]  # rows of very different size
    x[5] = 0.0  # an all-zero row rounds to zeros, not NaN
    linear = Int8A8Linear.from_linear(w, None)
    full = linear.matmul(x)
    for rows in (1, 2, 7):
        for begin in range(0, 33 - rows, 5):
            assert torch.equal(linear.matmul(x[begin : begin + rows]), full[begin : begin + rows])
    xq, x_scale = quantize_rows(x)
    q = linear.int8_weight().double()
    exact = (xq.double() @ q.t()) * linear.scale.double() * x_scale.double()
    torch.testing.assert_close(full.double(), exact, atol=1e-5, rtol=1e-6)
    assert bool((full[5] == 0).all())


def test_the_float_fallback_computes_the_same_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine without exact fbgemm multiplies the same integers in float32 mm."""
    torch.manual_seed(1)
    linear = Int8A8Linear.from_linear(torch.randn(96, 64), torch.randn(96))
    x = torch.randn(4, 64)
    fast = linear.matmul(x)
    monkeypatch.setattr(linear, "qweight", linear.int8_weight())  # what the fallback keeps
    monkeypatch.setattr(linear, "packed", None)
    torch.testing.assert_close(linear.matmul(x), fast, atol=0, rtol=0)


def test_this_machine_runs_the_fbgemm_product_or_says_why_not() -> None:
    linear = Int8A8Linear.from_linear(torch.randn(8, 16), None)
    assert (linear.packed is not None) == fbgemm_is_exact()


def test_a8_shard_chain_matches_its_own_reference_logits(tiny_llama: Path) -> None:
    from tests.core.runtime.test_int8 import _cache

    ids = torch.randint(0, 256, (2, 9), generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        expected = a8_reference(tiny_llama)(ids).logits.float()
        shards = [
            Shard.load(tiny_llama, 0, 2, weight_quantization=INT8_PER_CHANNEL_A8),
            Shard.load(tiny_llama, 2, 4, weight_quantization=INT8_PER_CHANNEL_A8),
        ]
        assert all(isinstance(b.mlp.down, Int8A8Linear) for b in shards[0].layers)  # type: ignore[union-attr]
        hidden = shards[0].run_layers(shards[0].embed_tokens(ids), 0, _cache(shards[0], 2), 0)
        got = shards[1].head(shards[1].run_layers(hidden, 0, _cache(shards[1], 2), 2))
    torch.testing.assert_close(got, expected, atol=ATOL, rtol=RTOL)


def test_eight_a8_sessions_decode_exactly_their_solo_tokens(tiny_llama: Path) -> None:
    shards = [
        Shard.load(tiny_llama, 0, 2, weight_quantization=INT8_PER_CHANNEL_A8),
        Shard.load(tiny_llama, 2, 4, weight_quantization=INT8_PER_CHANNEL_A8),
    ]
    solo = [list(generate_local(shards, ids, NEW_TOKENS)) for ids in prompts(8)]
    managers = [SessionManager(s) for s in shards]
    chats = [Chat(managers, ids) for ids in prompts(8)]
    assert len({c.sessions[0].position for c in chats}) == 8
    batched_decode(chats, NEW_TOKENS - 1)
    assert [c.tokens for c in chats] == solo


def test_a8_refuses_a_device_other_than_the_cpu(
    tiny_llama: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.errors import ConfigError

    monkeypatch.setattr("core.runtime.shard.parse_device", lambda name: torch.device("cuda"))
    with pytest.raises(ConfigError) as info:
        Shard.load(tiny_llama, 0, 2, weight_quantization=INT8_PER_CHANNEL_A8, device="cuda")
    assert info.value.reason == "bad-quantization" and "CPU only" in str(info.value)


def test_the_packed_weight_is_the_only_copy_and_is_counted() -> None:
    """With fbgemm the plain int8 tensor is dropped, and the packed copy still counts."""
    linear = Int8A8Linear.from_linear(torch.randn(64, 32), None)
    if linear.packed is None:
        pytest.skip("this machine's fbgemm is not exact; the plain int8 copy is the one used")
    assert linear.qweight.numel() == 0
    assert linear.packed_bytes == 64 * 32
    q, _ = quantize_per_channel(torch.randn(64, 32))
    assert linear.int8_weight().shape == q.shape
