"""Weight-only int8 with per-output-channel scales (the ``int8-per-channel`` scheme).

Not the catalogued int8 recipe any more: ``llama-int8`` also rounds activations
per token (``quant_a8.py``), because streamed from memory as a decode step reads
them, every weight-only kernel here was slower than float32 ``mm``
(``benchmarks/int8_kernels.py``). This scheme stays loadable for comparison.

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
measures them on the default model's shapes, float32 ``mm`` beside them. On
the 2-core Xeon (AVX-512, AMX) this was built on, under heavy load from other
processes, torch 2.13: summed over the five shapes at one row,
``_weight_int8pack_mm`` was the fastest int8 candidate (0.14 s vs 0.33 s for
convert-then-scale, 0.71 s dequantize-then-mm, 1.06 s blocked), the blocked
conversion won on the small projections but lost badly on the 49152-row LM
head. At 8 rows ``_weight_int8pack_mm`` cost ~5x its one-row time (it loops
over rows) and convert-then-scale was the fastest (0.50 s vs 0.68 s). Every
int8 kernel was slower than float32 ``mm`` there (0.06 s at one row), whose
weights fit that machine's 480 MB L3. So one row (a lone decode step) uses
``DEFAULT_KERNEL`` and several rows (a batch of sessions, a prefill)
``DEFAULT_ROWS_KERNEL``: the measured fastest of each; rerun the benchmark on
another machine before changing them.

Those figures reuse one matrix per shape, so its weights stay in cache. Streaming
fifteen distinct layers' weights instead, as a real step does (one thread, CPU
time, same machine, loaded): one row float32 ``mm`` with (in, out)-contiguous
weights 16.5 ms, ``_weight_int8pack_mm`` 38.6 ms, convert-then-scale 23.7 ms; eight
rows 36.4, 244 and 34.0 ms. fbgemm's dynamic int8 linear (int8 activations too)
took 7.0 / 8.1 ms, but it quantizes the activations with one scale for the whole
batch (a row's result depends on its batch-mates) and is no longer this recipe's
float32-activation arithmetic: it would be a recipe of its own.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

INT8_PER_CHANNEL = "int8-per-channel"
# int8 weights and per-token int8 activations, the catalogued int8 recipe (quant_a8.py)
INT8_PER_CHANNEL_A8 = "int8-per-channel-a8-per-token"
NO_QUANTIZATION = "none"
WEIGHT_QUANTIZATIONS = (NO_QUANTIZATION, INT8_PER_CHANNEL, INT8_PER_CHANNEL_A8)
BLOCK_BYTES = 1 << 20  # float32 bytes of one converted weight block (fits L2)

Kernel = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


def quantize_per_channel(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(O, I) float -> (int8 (O, I), float32 scale (O,)); an all-zero row gets scale 1."""
    w = weight.float()
    amax = w.abs().amax(dim=1)  # (O,)
    scale = torch.where(amax > 0, amax / 127.0, torch.ones_like(amax))
    q = torch.round(w / scale[:, None]).clamp_(-127, 127).to(torch.int8)
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
DEFAULT_KERNEL = "int8pack_mm"  # one row
DEFAULT_ROWS_KERNEL = "convert_mm_scale"  # two rows or more


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


def quantize_linears(
    module: nn.Module, names: list[str], cls: type[Int8Linear] = Int8Linear
) -> None:
    """Replace the nn.Linear children named by dotted ``names`` with ``cls`` (in place)."""
    for dotted in names:
        parent_name, _, child = dotted.rpartition(".")
        parent = module.get_submodule(parent_name) if parent_name else module
        linear = getattr(parent, child)
        assert isinstance(linear, nn.Linear), f"{dotted} is {type(linear).__name__}"
        setattr(parent, child, cls.from_linear(linear.weight.data, linear.bias))
