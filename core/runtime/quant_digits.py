"""Weight-only int8 on fbgemm's int8 product: float32 activations as three int8 digits.

The ``int8-per-channel`` recipe computes ``y = (x @ q.T) * w_scale`` with
float32 activations. Every kernel torch offers for that converts the int8
weights to float before multiplying, and streamed from memory as a decode step
reads them, that conversion cost more than the bytes it saved
(``benchmarks/int8_kernels.py``). fbgemm's int8 x int8 product reads the int8
weights as they are, but takes int8 activations.

So each activation row is written in three int8 digits. With
``s = max|x[n, :]| / 127`` and ``r = x / s``: ``h = round(r)``,
``l = round((r - h) * 254)``, ``m = round(((r - h) * 254 - l) * 254)``, each in
[-127, 127], and ``x ~= s * (h + l / 254 + m / 254**2)`` to within
``s / (2 * 254**2)``: about 6e-8 of the row's largest element, the size of
float32's own rounding. The 3N digit rows go through one exact integer product
(the weights are read once, not three times) and are recombined per row.
Measured against the float64 product of the same int8 weights this is as
close as float32 ``mm`` on the converted weights (tests/core/runtime/test_int8.py),
so it is the same recipe, computed faster.

Every step after the exact sums is per row, so a row's result does not depend
on what shares its batch. Where fbgemm is not exact (``fbgemm_int8``) the
layer keeps its plain int8 weight and uses ``quant.DEFAULT_KERNEL``.
"""

from __future__ import annotations

import torch

from core.runtime.fbgemm_int8 import PackedInt8Linear, product

BASE = 254.0  # a digit's range: round((r - h) * 254) stays within [-127, 127]


def to_digits(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(N, I) float32 -> (3N, I) integer-valued digits (h rows, l rows, m rows), scale (N, 1).

    An all-zero row gets a tiny scale and digits of zero."""
    n = x.shape[0]
    top = torch.linalg.vector_norm(x, float("inf"), dim=1, keepdim=True).clamp_min_(1e-30)
    digits = torch.empty(3 * n, x.shape[1], dtype=x.dtype)
    rest = x * (127.0 / top)
    for d in range(3):
        torch.round(rest, out=digits[d * n : (d + 1) * n])
        if d < 2:
            rest.sub_(digits[d * n : (d + 1) * n]).mul_(BASE)
    return digits, top.div_(127.0)


class Int8DigitsLinear(PackedInt8Linear):
    """Weight-only int8 Linear computed through fbgemm's exact int8 product (module doc)."""

    def matmul(self, x: torch.Tensor) -> torch.Tensor:  # (N, I) -> (N, O)
        if self.packed is None:
            return super().matmul(x)  # no exact fbgemm here: the float32 kernels
        n = x.shape[0]
        digits, scale = to_digits(x.contiguous())
        parts = product(digits, self.packed)  # (3N, O): sums * w_scale per digit row
        # h + (l + m / 254) / 254, in plain elementwise ops (no fused multiply-add whose
        # use could differ between a vector body and a scalar tail: rows stay independent)
        y = parts[2 * n :].div(BASE).add_(parts[n : 2 * n]).div_(BASE).add_(parts[:n])
        y.mul_(scale)
        return y if self.bias is None else y.add_(self.bias)
