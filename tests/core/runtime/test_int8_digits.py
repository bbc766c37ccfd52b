"""The weight-only int8 recipe on fbgemm: float32 activations as three int8 digits."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from core.runtime import Shard
from core.runtime.fbgemm_int8 import fbgemm_is_exact
from core.runtime.quant import DEFAULT_KERNEL, INT8_PER_CHANNEL, KERNELS, quantize_per_channel
from core.runtime.quant_digits import BASE, Int8DigitsLinear, to_digits

needs_fbgemm = pytest.mark.skipif(
    not fbgemm_is_exact(), reason="this machine's fbgemm is not exact: the float kernels run"
)


def _rows() -> torch.Tensor:
    torch.manual_seed(0)
    x = torch.randn(33, 300) * torch.logspace(-3, 3, 33)[:, None]  # rows of very different size
    x[4, 7] = 1e4  # one outlier in a row
    x[5] = 0.0  # an all-zero row gives zeros, not NaN
    return x


def test_three_digits_hold_each_row_to_float32_precision() -> None:
    x = _rows()
    digits, scale = to_digits(x)
    n = x.shape[0]
    assert bool((digits.abs() <= 127).all()) and torch.equal(digits, digits.round())
    h, low, m = digits[:n].double(), digits[n : 2 * n].double(), digits[2 * n :].double()
    back = (h + low / BASE + m / BASE**2) * scale.double()
    top = x.abs().amax(dim=1, keepdim=True).double()
    # the last digit's half step (6.1e-8 of the row's top) plus float32's rounding of x / s
    assert bool(((back - x.double()).abs() <= top * 2.5e-7).all())


@needs_fbgemm
def test_the_product_is_as_close_to_exact_as_float32_and_rows_are_batch_independent() -> None:
    x = _rows()
    q, w_scale = quantize_per_channel(torch.randn(700, 300) * 0.05)
    linear = Int8DigitsLinear(q, w_scale, None)
    full = linear.matmul(x)
    exact = (x.double() @ q.double().t()) * w_scale.double()
    floats = KERNELS[DEFAULT_KERNEL](x, q, w_scale)  # float32 on the converted weights
    for name, got in (("digits", full), ("float32", floats)):
        err = (got.double() - exact).abs().amax(dim=1) / exact.abs().amax(dim=1).clamp_min(1e-300)
        assert float(err.max()) < 1e-5, name
    err_digits = (full.double() - exact).abs().max()
    err_float = (floats.double() - exact).abs().max()
    assert err_digits <= 2 * err_float
    assert bool((full[5] == 0).all())
    for rows in (1, 2, 7):
        for begin in range(0, 33 - rows, 5):
            assert torch.equal(linear.matmul(x[begin : begin + rows]), full[begin : begin + rows])


@needs_fbgemm
def test_the_packed_weight_is_the_only_copy_and_the_fallback_agrees(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    q, w_scale = quantize_per_channel(torch.randn(96, 64))
    linear = Int8DigitsLinear(q, w_scale, torch.randn(96))
    assert linear.qweight.numel() == 0 and linear.packed_bytes == 96 * 64
    assert torch.equal(linear.int8_weight(), q)
    x = torch.randn(4, 64)
    fast = linear.matmul(x)
    monkeypatch.setattr(linear, "qweight", linear.int8_weight())  # what the fallback keeps
    monkeypatch.setattr(linear, "packed", None)
    torch.testing.assert_close(linear.matmul(x), fast, atol=1e-5, rtol=1e-5)


def test_a_cpu_int8_shard_uses_the_digits_layer_and_counts_its_bytes(tiny_llama: Path) -> None:
    dense = Shard.load(tiny_llama, 1, 3)
    int8 = Shard.load(tiny_llama, 1, 3, weight_quantization=INT8_PER_CHANNEL)
    layers = int8.layers  # type: ignore[union-attr]
    assert all(isinstance(b.mlp.down, Int8DigitsLinear) for b in layers)
    assert 0.2 * dense.weight_bytes() < int8.weight_bytes() < 0.3 * dense.weight_bytes()
