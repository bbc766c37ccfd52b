"""fbgemm's exact int8 x int8 product, and an int8 Linear that keeps only fbgemm's packed weight.

fbgemm (VNNI) multiplies uint8 activations by int8 weights and sums in int32,
so for integer-valued activations in [-127, 127] (sent shifted by 128 with an
activation scale of exactly 1.0) the sums are exact and the epilogue is one
rounding of ``sum * w_scale[o]``. A machine whose fbgemm would saturate (no
VNNI: pairs of u8 x s8 products summed in int16) or that has no fbgemm fails a
one-off exactness probe, and the layers built on this fall back to float32.
"""

from __future__ import annotations

import functools
import logging
import warnings

import torch

from core.runtime.quant import Int8Linear

logger = logging.getLogger(__name__)

_ZERO_POINT = 128  # fbgemm's activations are uint8: xq + 128


def prepack(q: torch.Tensor, scale: torch.Tensor) -> torch.ScriptObject:
    """(O, I) int8 weight and (O,) float32 scales -> fbgemm's packed weight."""
    zero = torch.zeros(q.shape[0], dtype=torch.long)
    with warnings.catch_warnings():  # torch says quantized tensors are deprecated
        warnings.simplefilter("ignore", UserWarning)
        qt = torch._make_per_channel_quantized_tensor(q, scale.double(), zero, 0)
    return torch.ops.quantized.linear_prepack(qt, None)


def product(xq: torch.Tensor, packed: torch.ScriptObject) -> torch.Tensor:
    """Integer-valued float32 (N, I) in [-127, 127] -> float32 (N, O) ``sum * w_scale``."""
    op = torch.ops.quantized.linear_with_input_q_dq_qweight_dq_output_fp32
    return op(xq, 1.0, _ZERO_POINT, packed)


@functools.cache
def fbgemm_is_exact() -> bool:
    """Whether this machine's fbgemm computes the full-range product exactly (once)."""
    try:
        q = torch.tensor([[127] * 64, [-127] * 64, [127, -127] * 32], dtype=torch.int8)
        xq = torch.tensor([[127.0] * 64, [-127.0] * 64, [1.0] * 64])
        exact = torch.equal(product(xq, prepack(q, torch.ones(3))), xq @ q.float().t())
    except (RuntimeError, AttributeError) as exc:  # no fbgemm engine in this torch build
        logger.info("int8: fbgemm unavailable (%s); using float32 mm", exc)
        return False
    if not exact:
        logger.info("int8: fbgemm saturates here (no VNNI); using float32 mm")
    return exact


class PackedInt8Linear(Int8Linear):
    """An Int8Linear that, where fbgemm is exact, holds only fbgemm's packed weight."""

    def __init__(
        self, qweight: torch.Tensor, scale: torch.Tensor, bias: torch.Tensor | None
    ) -> None:
        super().__init__(qweight, scale, bias)
        self.packed = prepack(qweight, scale) if fbgemm_is_exact() else None
        self.packed_bytes = 0
        if self.packed is not None:
            # the packed copy is the only one read from now on: keeping the plain int8
            # tensor too would hold the weights twice (Shard.weight_bytes counts this)
            self.packed_bytes = qweight.numel() * qweight.element_size()
            self.qweight = torch.empty(0, dtype=torch.int8)

    def int8_weight(self) -> torch.Tensor:
        """The (O, I) int8 weight, unpacked from fbgemm's copy when that is the only one."""
        if self.packed is None:
            return self.qweight
        weight, _ = torch.ops.quantized.linear_unpack(self.packed)
        return weight.int_repr()
