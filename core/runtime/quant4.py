"""Group-wise 4-bit weights (``int4-g32-int8-head``, the scheme of the catalogued ``llama-q4``).

Each run of 32 input weights of an output row gets a bfloat16 scale and a
bfloat16 zero, the format torch's int4 kernels take: with ``lo``/``hi`` the
group's extremes, ``scale = (hi - lo) / 15`` and ``zero = lo + 8 * scale``
(both rounded to bfloat16 first), ``q = round((w - zero) / scale) + 8`` in
[0, 15], and ``w ~= (q - 8) * scale + zero``. A weight costs 4 bits plus
2 x 16 bits per 32 weights: 5 bits, 0.156 of float32.

Why it is faster: a decode step reads every weight once, and at 5 bits it reads
a sixth of float32's bytes. The product is torch's weight-only int4 matmul,
which takes bfloat16 activations: ``x`` is rounded to bfloat16 for the product
(and the product to bfloat16 on its way out), everything else — norms,
attention, the KV cache, the wire — stays float32 as in ``llama-fp32``.

Three ways compute the same product:

* x86 CPU: ``aten._weight_int4pack_mm_for_cpu`` on the weight repacked by
  ``_convert_weight_to_int4pack_for_cpu`` (needs O % 16 == 0, I % 32 == 0);
* NVIDIA: ``aten._weight_int4pack_mm`` on ``_convert_weight_to_int4pack``'s
  tiles (also needs I % 1024 == 0 for its inner tiles, else the fallback);
* anywhere else, and for shapes the kernels refuse: the plain fallback, which
  unpacks and dequantizes ~1 MB row blocks and multiplies in float32 (the
  same bfloat16-rounded activations; results agree with the kernels to
  bfloat16's rounding, tests/core/runtime/test_q4.py).

Every one of them computes each output row from its own input row only, so a
row's result does not depend on what shares its batch: cached decode equals
the full forward (the doctor's incremental check).

The LM head keeps 8 bits (``Int8Rows``: int8 per vocabulary row, a bfloat16
scale, ``aten._weight_int8pack_mm`` on bfloat16 activations): on the default
model a 4-bit head alone raised perplexity by 7 %, every 4-bit projection
together by under 1 %. The embedding of a first shard dequantizes only the
rows a step looks up from the same kind of table — the head's own when the two
are tied (one copy for both) — since left in float32 it alone would outweigh
all the 4-bit layers.
"""

from __future__ import annotations

import functools
import logging

import torch
import torch.nn.functional as F
from torch import nn

from core.runtime.quant import INT4_G32_INT8_HEAD, row_blocks

log = logging.getLogger(__name__)

__all__ = ["INT4_G32_INT8_HEAD", "Int4Linear", "Int8Embedding", "Int8Rows"]

GROUP = 32
INNER_K_TILES = 2  # the CPU kernel ignores it; CUDA's tiles need I % (16 * 2 * 32)
BLOCK_BYTES = 1 << 20  # float32 bytes of one dequantized block in the fallback


def quantize_groups(weight: torch.Tensor, group: int = GROUP) -> tuple[torch.Tensor, torch.Tensor]:
    """(O, I) float, I % group == 0 -> (uint8 (O, I) in [0, 15], bfloat16 (I/group, O, 2)).

    The second tensor holds each group's (scale, zero), laid out as the kernels take it.
    A constant group gets scale 1 and its value as zero (exact up to bfloat16)."""
    n_out, n_in = weight.shape
    q = torch.empty(n_out, n_in, dtype=torch.uint8, device=weight.device)
    scale_zero = torch.empty(n_in // group, n_out, 2, dtype=torch.bfloat16, device=weight.device)
    for begin, n in row_blocks(n_out, n_in):  # row by row: blocks give the same numbers
        w = weight.narrow(0, begin, n).float().reshape(n, n_in // group, group)  # (n, G, g)
        lo, hi = w.amin(dim=-1), w.amax(dim=-1)  # (n, G)
        scale = torch.where(hi > lo, (hi - lo) / 15.0, torch.ones_like(lo)).bfloat16().float()
        zero = (lo + 8.0 * scale).bfloat16().float()
        block = w.sub(zero[..., None]).div_(scale[..., None]).round_().add_(8).clamp_(0, 15)
        q[begin : begin + n] = block.reshape(n, n_in).to(torch.uint8)
        # (G, n, 2); both already bfloat16 values
        scale_zero[:, begin : begin + n] = torch.stack([scale, zero], dim=-1).transpose(0, 1)
    return q, scale_zero


def dequantize_groups(q: torch.Tensor, scale_zero: torch.Tensor) -> torch.Tensor:
    """uint8 (O, I) in [0, 15] and bfloat16 (G, O, 2) -> float32 (O, I)."""
    n_out, n_in = q.shape
    groups = scale_zero.shape[0]
    sz = scale_zero.float().transpose(0, 1)  # (O, G, 2)
    w = q.reshape(n_out, groups, n_in // groups).float().sub_(8).mul_(sz[..., :1])
    return w.add_(sz[..., 1:]).reshape(n_out, n_in)


def pack_nibbles(q: torch.Tensor) -> torch.Tensor:
    """uint8 (O, I) in [0, 15] -> uint8 (O, I/2): input 2k in the high nibble, 2k+1 in the
    low one (the order CUDA's ``_convert_weight_to_int4pack`` reads)."""
    return (q[:, 0::2] << 4) | q[:, 1::2]


def unpack_nibbles(packed: torch.Tensor) -> torch.Tensor:
    """uint8 (O, I/2) -> uint8 (O, I) in [0, 15]."""
    return torch.stack([packed >> 4, packed & 15], dim=-1).reshape(packed.shape[0], -1)


@functools.cache
def cpu_kernel_works() -> bool:
    """Whether this torch has the CPU int4 kernel and it computes a known product (once)."""
    try:
        q = torch.arange(16 * 64, dtype=torch.int32).reshape(16, 64) % 16
        sz = torch.tensor([1.0, 0.0], dtype=torch.bfloat16).expand(2, 16, 2).contiguous()
        packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu(q, INNER_K_TILES)
        x = torch.ones(1, 64, dtype=torch.bfloat16)
        y = torch.ops.aten._weight_int4pack_mm_for_cpu(x, packed, GROUP, sz)
        ok = torch.equal(y.float(), (q.float() - 8).sum(dim=1)[None])
    except (RuntimeError, AttributeError, NotImplementedError) as exc:
        log.info("int4: no CPU int4 kernel in this torch (%s); using the plain fallback", exc)
        return False
    if not ok:
        log.info("int4: the CPU int4 kernel disagrees with its probe; using the plain fallback")
    return ok


def _cuda_kernel_fits(device: torch.device, n_out: int, n_in: int) -> bool:
    if device.type != "cuda" or n_out % 8 or n_in % (16 * INNER_K_TILES * 32):
        return False
    major, _ = torch.cuda.get_device_capability(device)
    return major >= 8  # the tensor-core kernel is built for sm_80 and newer


class Int4Linear(nn.Module):
    """A Linear whose weight is stored in 4-bit groups (module doc).

    ``weight`` holds the nibbles either as the plain (O, I/2) packing or, once
    :meth:`pack_for` found a kernel for the device and shape, in that kernel's
    own layout (``kernel`` says which)."""

    def __init__(
        self,
        packed: torch.Tensor,  # (O, I/2) uint8, plain nibble order
        scale_zero: torch.Tensor,  # (I/GROUP, O, 2) bfloat16
        bias: torch.Tensor | None,
        group: int = GROUP,
    ) -> None:
        super().__init__()
        self.weight: torch.Tensor
        self.scale_zero: torch.Tensor
        self.bias: torch.Tensor | None
        self.register_buffer("weight", packed)
        self.register_buffer("scale_zero", scale_zero)
        self.register_buffer("bias", bias)
        self.group = group
        self.out_features = int(packed.shape[0])
        self.in_features = int(packed.shape[1]) * 2
        self.kernel = "plain"

    @classmethod
    def from_linear(cls, weight: torch.Tensor, bias: torch.Tensor | None) -> Int4Linear:
        q, scale_zero = quantize_groups(weight)
        return cls(pack_nibbles(q), scale_zero, None if bias is None else bias.float())

    def pack_for(self, device: torch.device) -> None:
        """Repack the (already moved) plain weight into the device's kernel layout, where
        the device has one that takes this shape; otherwise keep the plain fallback."""
        if self.kernel != "plain":
            return
        n_out, n_in = self.out_features, self.in_features
        if device.type == "cpu" and n_out % 16 == 0 and cpu_kernel_works():
            q = unpack_nibbles(self.weight).to(torch.int32)
            self.weight = torch.ops.aten._convert_weight_to_int4pack_for_cpu(q, INNER_K_TILES)
            self.kernel = "cpu"
        elif _cuda_kernel_fits(device, n_out, n_in):
            self.weight = torch.ops.aten._convert_weight_to_int4pack(self.weight, INNER_K_TILES)
            self.kernel = "cuda"

    def _kernel(self, x: torch.Tensor) -> torch.Tensor:
        xb = x.to(torch.bfloat16)
        if self.kernel == "cpu":
            y = torch.ops.aten._weight_int4pack_mm_for_cpu(
                xb, self.weight, self.group, self.scale_zero
            )
        else:
            y = torch.ops.aten._weight_int4pack_mm(xb, self.weight, self.group, self.scale_zero)
        return y.float()

    def _plain(self, x: torch.Tensor) -> torch.Tensor:
        """Dequantize ~1 MB blocks of rows at a time and multiply in float32."""
        xb = x.to(torch.bfloat16).float()  # the kernels' activations
        n_out = self.out_features
        rows = max(64, BLOCK_BYTES // (4 * self.in_features))
        out = torch.empty(x.shape[0], n_out, dtype=torch.float32, device=x.device)
        for begin in range(0, n_out, rows):
            n = min(rows, n_out - begin)
            w = dequantize_groups(
                unpack_nibbles(self.weight.narrow(0, begin, n)),
                self.scale_zero.narrow(1, begin, n),
            )
            torch.mm(xb, w.t(), out=out.narrow(1, begin, n))
        return out

    def matmul(self, x: torch.Tensor) -> torch.Tensor:  # (N, I) -> (N, O) float32
        y = self._plain(x) if self.kernel == "plain" else self._kernel(x.contiguous())
        return y if self.bias is None else y.add_(self.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        return self.matmul(x.reshape(-1, shape[-1])).view(*shape[:-1], self.out_features)


@functools.cache
def int8pack_works(device_type: str) -> bool:
    """Whether ``aten._weight_int8pack_mm`` takes bfloat16 activations here (probed once)."""
    try:
        q = (torch.arange(16 * 64) % 7 - 3).to(torch.int8).reshape(16, 64)  # sums exact in bf16
        x = torch.ones(1, 64, dtype=torch.bfloat16, device=device_type)
        scale = torch.ones(16, dtype=torch.bfloat16, device=device_type)
        y = torch.ops.aten._weight_int8pack_mm(x, q.to(device_type), scale)
        return torch.equal(y.float().cpu(), q.float().sum(dim=1)[None])
    except (RuntimeError, AttributeError, NotImplementedError) as exc:
        log.info("int8 rows: no bfloat16 int8 kernel on %s (%s); plain fallback", device_type, exc)
        return False


class Int8Rows(nn.Module):
    """The LM head in int8 with one bfloat16 scale per vocabulary row, and the table a
    (tied) embedding reads its rows from: one copy serves both.

    The head decides the next token, and 4 bits there cost the default model 7 % of
    perplexity where every other projection together costs under 1 %, so it keeps 8."""

    def __init__(self, qweight: torch.Tensor, scale: torch.Tensor) -> None:
        super().__init__()
        self.qweight: torch.Tensor
        self.scale: torch.Tensor
        self.register_buffer("qweight", qweight)  # (V, H) int8
        self.register_buffer("scale", scale)  # (V,) bfloat16
        self.out_features, self.in_features = (int(n) for n in qweight.shape)

    @classmethod
    def from_linear(cls, weight: torch.Tensor, bias: torch.Tensor | None) -> Int8Rows:
        if bias is not None:
            raise ValueError("an int8 LM head carries no bias")
        n_out, n_in = weight.shape
        q = torch.empty(n_out, n_in, dtype=torch.int8, device=weight.device)
        scale = torch.empty(n_out, dtype=torch.bfloat16, device=weight.device)
        for begin, n in row_blocks(n_out, n_in):  # a vocabulary of rows: bounded temporaries
            w = weight.narrow(0, begin, n).float()
            amax = w.abs().amax(dim=1)
            s = torch.where(amax > 0, amax / 127.0, torch.ones_like(amax)).bfloat16()
            q[begin : begin + n] = (
                w.div(s.float()[:, None]).round_().clamp_(-127, 127).to(torch.int8)
            )
            scale[begin : begin + n] = s
        return cls(q, scale)

    def rows(self, ids: torch.Tensor) -> torch.Tensor:  # (N,) -> (N, H) float32
        return F.embedding(ids, self.qweight).float().mul_(self.scale.index_select(0, ids)[:, None])

    def matmul(self, x: torch.Tensor) -> torch.Tensor:  # (N, H) -> (N, V) float32
        xb = x.contiguous().to(torch.bfloat16)
        if int8pack_works(x.device.type):
            return torch.ops.aten._weight_int8pack_mm(xb, self.qweight, self.scale).float()
        rows = max(64, BLOCK_BYTES // (4 * self.in_features))
        out = torch.empty(x.shape[0], self.out_features, dtype=torch.float32, device=x.device)
        scale = self.scale.float()
        for begin in range(0, self.out_features, rows):
            n = min(rows, self.out_features - begin)
            block = self.qweight.narrow(0, begin, n).t().float()
            torch.mm(xb.float(), block, out=out.narrow(1, begin, n))
        return out.mul_(scale)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        return self.matmul(x.reshape(-1, shape[-1])).view(*shape[:-1], self.out_features)


class Int8Embedding(nn.Module):
    """An embedding that dequantizes only the rows a step looks up, from ``Int8Rows``
    (the LM head's own table when the two are tied)."""

    def __init__(self, table: Int8Rows) -> None:
        super().__init__()
        self.table = table

    def lookup(self, ids: torch.Tensor) -> torch.Tensor:  # (B, T) -> (B, T, H) float32
        return self.table.rows(ids.reshape(-1)).view(*ids.shape, -1)
