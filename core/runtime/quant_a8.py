"""int8 weights and per-token int8 activations (the ``int8-per-channel-a8-per-token`` scheme).

An experiment, not a catalogued recipe. It is fast, but rounding activations
makes it discontinuous: the last-bit differences between a full forward and a
cached decode (different attention calls) flip some roundings, and a flip
grows through the layers. On the default model's layers 15-30 the doctor's
incremental check measured a relative error of 2.8e-2 and 6 of 24 greedy
tokens different, so a node could not pass admission, and an audit's replay
could not match its answers. ``llama-int8`` is weight-only (``quant.py``).

Why activations too: on the 2-core Xeon this was built on (AVX-512 VNNI, AMX),
no weight-only int8 kernel torch offers beat float32 ``mm`` once the weights
are streamed from memory as a decode step reads them (``benchmarks/int8_kernels.py``,
cold figures): each converts int8 to float before multiplying, and that costs
more than the bytes it saves. An int8 x int8 product with int32 sums (fbgemm,
VNNI) reads the int8 weights directly and took about a third of float32's
time for a whole model's projections. So this scheme rounds each activation
row to int8 with its own scale before the product.

Per row, never per batch: ``scale[n] = max|x[n, :]| / 127``,
``xq = round(x / scale)``. The integer sums are exact, and every step after
them is elementwise, so a row's result depends on that row alone: a session's
tokens are the same whatever shares its batch (fbgemm's own dynamic linear
takes one scale for the whole batch and would break that).

``y[n, o] = float(sum_i xq[n, i] * q[o, i]) * w_scale[o] * x_scale[n]``: the
packed fbgemm weight carries ``w_scale`` (with an activation scale of exactly
1.0, so its epilogue is one rounding of ``sum * w_scale``) and the activation
scale applies to the (N, O) output. fbgemm takes unsigned activations, so the
rows travel shifted by 128 (``xq + 128`` in [1, 255]); a machine whose fbgemm
would saturate on that range (no VNNI: pairs of u8 x s8 products summed in
int16) or that has no fbgemm fails a one-off exactness probe and computes the
same integer product in float32 ``mm`` instead, exact while partial sums stay
under 2**24.
"""

from __future__ import annotations

import torch

from core.runtime.fbgemm_int8 import PackedInt8Linear, fbgemm_is_exact, product
from core.runtime.quant import INT8_PER_CHANNEL_A8

__all__ = ["INT8_PER_CHANNEL_A8", "Int8A8Linear", "fbgemm_is_exact", "quantize_rows"]
_Q_MAX = torch.tensor(127.0)  # a float32 tensor: dividing by a Python float casts per call


def quantize_rows(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(N, I) float32 -> (integer-valued float32 (N, I) in [-127, 127], scale (N, 1)).

    An all-zero row gets a tiny scale and rounds to zeros."""
    scale = torch.linalg.vector_norm(x, float("inf"), dim=1, keepdim=True)
    scale = scale.clamp_min_(1e-30).div_(_Q_MAX)
    return x.div(scale).round_(), scale


class Int8A8Linear(PackedInt8Linear):
    """Int8Linear whose product also rounds each activation row to int8 (see module doc)."""

    def matmul(self, x: torch.Tensor) -> torch.Tensor:  # (N, I) -> (N, O)
        xq, x_scale = quantize_rows(x.contiguous())
        if self.packed is not None:
            y = product(xq, self.packed)
        else:
            y = torch.mm(xq, self.qweight.t().float()).mul_(self.scale)
        y.mul_(x_scale)
        return y if self.bias is None else y.add_(self.bias)
