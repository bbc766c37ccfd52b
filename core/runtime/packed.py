"""A float32 projection stored in oneDNN's packed weight layout (CPU only).

Used for the LM head, the largest matrix of a last shard (49152 x 576 for the
default model): measured at one thread, oneDNN's packed matmul costs about what
MKL's ``mm`` does for one row and much less for several (8 rows: 11.5 ms vs
19.0 ms for the best ``mm`` layout), so a batch of sessions pays little more
than one session for the head. Each output row depends only on its own input
row (checked in the tests), so a session's logits do not depend on its company.

The packed tensor replaces the plain weight (no second copy is kept).
"""

from __future__ import annotations

import logging

import torch
from torch import nn

log = logging.getLogger(__name__)


def packing_available() -> bool:
    return bool(torch.backends.mkldnn.is_available()) and hasattr(
        torch.ops.mkldnn, "_linear_pointwise"
    )


class PackedLinear(nn.Module):
    """``x @ W.T (+ b)`` with W held as an opaque oneDNN tensor."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None) -> None:
        super().__init__()
        self.out_features, self.in_features = (int(n) for n in weight.shape)
        self.packed = torch.ops.mkldnn._reorder_linear_weight(weight.detach().float(), None)
        self.bias: torch.Tensor | None
        self.register_buffer("bias", None if bias is None else bias.detach().float())

    @classmethod
    def try_from(cls, linear: nn.Linear) -> PackedLinear | None:
        """The packed twin of a float32 CPU Linear, or None where oneDNN cannot pack it."""
        w = linear.weight
        if not packing_available() or w.device.type != "cpu" or w.dtype != torch.float32:
            return None
        try:
            return cls(w, linear.bias)
        except RuntimeError as exc:  # an unusual build: keep the plain weight
            log.info("oneDNN weight packing unavailable (%s); keeping the plain head", exc)
            return None

    @property
    def weight_bytes(self) -> int:
        return self.out_features * self.in_features * 4

    def matmul(self, x: torch.Tensor) -> torch.Tensor:  # (N, I) -> (N, O)
        if x.dtype != torch.float32:
            x = x.float()
        return torch.ops.mkldnn._linear_pointwise(
            x.contiguous(), self.packed, self.bias, "none", [], ""
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        return self.matmul(x.reshape(-1, shape[-1])).view(*shape[:-1], self.out_features)
