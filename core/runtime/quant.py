"""Weight-only int8 with per-output-channel scales (the ``int8-per-channel`` scheme).

This is the catalogued ``llama-int8`` recipe; on a CPU whose fbgemm is exact
its layers are ``quant_digits.Int8DigitsLinear`` (faster, same arithmetic).
(An experiment that also rounded activations per token was dropped: its
cached decode disagreed with its own full forward, and its quality depended on
the CPU's float kernels; docs/wire.md.)

Why weight-only: a decode step reads every weight of the shard once, so
storing each weight in one byte instead of four cuts the bytes a step must
read and the memory a shard holds by about four, while activations, the KV
cache and every sum stay float32 (hidden states on the wire keep the fp32
recipe's dtype and shapes).

Quantization is symmetric per output row: ``scale[o] = max|W[o, :]| / 127``,
``q = round(W / scale)``, so ``W ~= q * scale[:, None]`` and
``x @ W.T == (x @ q.T) * scale``: the scale is applied to the (N, O) output,
never to the (O, I) weight.

Several CPU kernels compute that product; ``benchmarks/int8_kernels.py``
measures them streaming a whole model's projections (30 layers, each with its
own weights, and the LM head), as a decode step reads them, float32 ``mm``
beside them. On the 2-core Xeon (AVX-512, AMX) this was built on, torch 2.13,
one row: float32 26.6 ms, blocked conversion 33.6 ms, convert-then-scale
69.8 ms, ``_weight_int8pack_mm`` 48.8 ms; eight rows: 57.4, 42.2, 92.2 and
304.9 ms. Every one converts int8 to float before multiplying, and that costs
more than the bytes it saves. The blocked conversion is the fastest at both
sizes, so one row and several rows use the same kernel: a row's arithmetic
then depends less on how many rows share its batch. Rerun the benchmark on
another machine before changing ``DEFAULT_KERNEL`` / ``DEFAULT_ROWS_KERNEL``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import torch
from torch import nn

INT8_PER_CHANNEL = "int8-per-channel"
NO_QUANTIZATION = "none"
INT4_G32_INT8_HEAD = "int4-g32-int8-head"  # 4-bit groups of 32, int8 head (quant4.py)
WEIGHT_QUANTIZATIONS = (NO_QUANTIZATION, INT8_PER_CHANNEL, INT4_G32_INT8_HEAD)
BLOCK_BYTES = 1 << 20  # float32 bytes of one converted weight block (fits L2)

Kernel = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


QUANTIZE_BLOCK_BYTES = 8 << 20  # float32 bytes of the rows quantized at a time


def row_blocks(n_out: int, n_in: int) -> list[tuple[int, int]]:
    """(first row, rows) of ~QUANTIZE_BLOCK_BYTES blocks of an (n_out, n_in) float32 matrix.

    Every scheme quantizes each row on its own, so quantizing block by block gives the
    same numbers while its temporaries stay one block's size: a vocabulary-sized LM head
    (Llama 3's, 2.1 GB in float32) would otherwise need about twice its float32 bytes
    more while a shard loads."""
    rows = max(1, QUANTIZE_BLOCK_BYTES // (4 * n_in))
    return [(begin, min(rows, n_out - begin)) for begin in range(0, n_out, rows)]


def quantize_per_channel(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(O, I) float -> (int8 (O, I), float32 scale (O,)); an all-zero row gets scale 1."""
    n_out, n_in = weight.shape
    q = torch.empty(n_out, n_in, dtype=torch.int8, device=weight.device)
    scale = torch.empty(n_out, dtype=torch.float32, device=weight.device)
    for begin, n in row_blocks(n_out, n_in):
        w = weight.narrow(0, begin, n).float()
        amax = w.abs().amax(dim=1)  # (n,)
        s = torch.where(amax > 0, amax / 127.0, torch.ones_like(amax))
        q[begin : begin + n] = w.div(s[:, None]).round_().clamp_(-127, 127).to(torch.int8)
        scale[begin : begin + n] = s
    return q, scale


def dequantize(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return q.float() * scale[:, None]  # (O, I)


# -- the candidate kernels: x (N, I) float32, q (O, I) int8, scale (O,) -> (N, O) ------


def kernel_int8pack(x: torch.Tensor, q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """torch's weight-only int8 matmul (aten._weight_int8pack_mm)."""
    return torch.ops.aten._weight_int8pack_mm(x, q, scale)


def kernel_dequantize(x: torch.Tensor, q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """Dequantize the whole weight, then one fp32 matmul."""
    return torch.mm(x, dequantize(q, scale).t())


def kernel_convert_then_scale(
    x: torch.Tensor, q: torch.Tensor, scale: torch.Tensor
) -> torch.Tensor:
    """Convert int8 -> float32 without scaling, matmul, scale the (N, O) output."""
    return torch.mm(x, q.t().float()).mul_(scale)


def kernel_blocked(x: torch.Tensor, q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """Convert and multiply ~1 MB row blocks at a time, then scale the output."""
    n_out, n_in = q.shape
    rows = max(64, BLOCK_BYTES // (4 * n_in))
    if rows >= n_out:
        return torch.mm(x, q.t().float()).mul_(scale)
    out = torch.empty(x.shape[0], n_out, dtype=x.dtype, device=x.device)
    for begin in range(0, n_out, rows):
        n = min(rows, n_out - begin)
        torch.mm(x, q.narrow(0, begin, n).t().float(), out=out.narrow(1, begin, n))
    return out.mul_(scale)


KERNELS: dict[str, Kernel] = {
    "int8pack_mm": kernel_int8pack,
    "dequantize_mm": kernel_dequantize,
    "convert_mm_scale": kernel_convert_then_scale,
    "blocked_convert_mm": kernel_blocked,
}
DEFAULT_KERNEL = "blocked_convert_mm"  # one row (a lone decode step)
DEFAULT_ROWS_KERNEL = "blocked_convert_mm"  # several (a batch of sessions, a prefill)


class Int8Linear(nn.Module):
    """A Linear whose weight is stored int8 with one float32 scale per output row."""

    def __init__(
        self,
        qweight: torch.Tensor,  # (O, I) int8
        scale: torch.Tensor,  # (O,) float32
        bias: torch.Tensor | None,
        kernel: str = DEFAULT_KERNEL,
        rows_kernel: str = DEFAULT_ROWS_KERNEL,
    ) -> None:
        super().__init__()
        self.qweight: torch.Tensor
        self.scale: torch.Tensor
        self.bias: torch.Tensor | None
        self.register_buffer("qweight", qweight)
        self.register_buffer("scale", scale)
        self.register_buffer("bias", bias)
        self.kernel: Kernel = KERNELS[kernel]
        self.rows_kernel: Kernel = KERNELS[rows_kernel]
        self.in_features = int(qweight.shape[1])
        self.out_features = int(qweight.shape[0])

    @classmethod
    def from_linear(cls, weight: torch.Tensor, bias: torch.Tensor | None) -> Int8Linear:
        q, scale = quantize_per_channel(weight)
        return cls(q, scale, None if bias is None else bias.float())

    def matmul(self, x: torch.Tensor) -> torch.Tensor:  # (N, I) -> (N, O)
        kernel = self.kernel if x.shape[0] == 1 else self.rows_kernel
        y = kernel(x, self.qweight, self.scale)
        return y if self.bias is None else y.add_(self.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        return self.matmul(x.reshape(-1, shape[-1])).view(*shape[:-1], self.out_features)


class _FromLinear(Protocol):
    def from_linear(self, weight: torch.Tensor, bias: torch.Tensor | None) -> nn.Module: ...


def quantize_linears(module: nn.Module, names: list[str], cls: _FromLinear = Int8Linear) -> None:
    """Replace the nn.Linear children named by dotted ``names`` with ``cls`` (in place)."""
    for dotted in names:
        parent_name, _, child = dotted.rpartition(".")
        parent = module.get_submodule(parent_name) if parent_name else module
        linear = getattr(parent, child)
        assert isinstance(linear, nn.Linear), f"{dotted} is {type(linear).__name__}"
        setattr(parent, child, cls.from_linear(linear.weight.data, linear.bias))
