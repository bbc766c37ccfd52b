"""Do two nodes' answers to the same hop input agree, within the recipe's tolerance?

Two honest nodes never return bit-identical hidden states: thread counts and
kernels reorder float sums. So agreement is closeness, and how close depends
on the recipe's compute dtype (an axis of the recipe, so part of what nodes
of one fingerprint share): float32 rounding is ~1e-7 relative, bfloat16 ~1e-2.
The bound is relative to the tensor's own scale, because hidden-state
magnitudes grow through the layers. A last hop answers with a sampled token;
under greedy sampling two honest nodes pick the same one, so it must match.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tracker_service.domain import wire_frames

# Largest |a - b| allowed, as a fraction of max |b|, per compute dtype. A dtype
# not listed gets the loosest bound rather than a refusal to audit.
RELATIVE_TOLERANCE: dict[str, float] = {
    "float32": 1e-3,
    "float16": 2e-2,
    "bfloat16": 5e-2,
}
LOOSEST_TOLERANCE = 5e-2
# Weight quantizations whose products take bfloat16 activations whatever the compute
# dtype (the node's core/runtime/quant4.py): two honest nodes differ as bfloat16 ones do.
BFLOAT16_PRODUCTS = frozenset({"int4-g32-int8-head"})


def tolerance_for(compute_dtype: str, weight_quantization: str = "none") -> float:
    tolerance = RELATIVE_TOLERANCE.get(compute_dtype, LOOSEST_TOLERANCE)
    if weight_quantization in BFLOAT16_PRODUCTS:
        return max(tolerance, RELATIVE_TOLERANCE["bfloat16"])
    return tolerance


@dataclass(frozen=True)
class Comparison:
    agree: bool
    difference: float  # relative max difference, or 0/1 for tokens
    tolerance: float
    detail: str


def hidden_array(frame: bytes, max_bytes: int) -> np.ndarray:
    """A reply's ``hidden`` tensor as float32 (F32, F16 and BF16 frames)."""
    header = wire_frames.read_header(frame, max_bytes)
    entry = header.tensors.get(wire_frames.HIDDEN)
    if entry is None:
        raise wire_frames.FrameError("the reply holds no 'hidden' tensor")
    begin, end = entry.offsets
    raw = frame[header.data_start + begin : header.data_start + end]
    if entry.dtype == "F32":
        values = np.frombuffer(raw, dtype="<f4")
    elif entry.dtype == "F16":
        values = np.frombuffer(raw, dtype="<f2").astype(np.float32)
    elif entry.dtype == "BF16":
        values = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
    else:
        raise wire_frames.FrameError(f"'hidden' of dtype {entry.dtype} cannot be compared")
    return values.reshape(entry.shape)


def compare_replies(
    first: bytes, second: bytes, *, last_hop: bool, tolerance: float, max_bytes: int
) -> Comparison:
    """Compare two replies to one hop input (hidden states, or the last hop's token)."""
    if last_hop:
        a = wire_frames.decode_last_hop(first, max_bytes=max_bytes, batch_size=1)
        b = wire_frames.decode_last_hop(second, max_bytes=max_bytes, batch_size=1)
        same = a.token_ids == b.token_ids
        return Comparison(
            same,
            0.0 if same else 1.0,
            0.0,
            f"greedy tokens {a.token_ids} and {b.token_ids}",
        )
    a_h, b_h = hidden_array(first, max_bytes), hidden_array(second, max_bytes)
    if a_h.shape != b_h.shape:
        return Comparison(
            False, float("inf"), tolerance, f"shapes {list(a_h.shape)} and {list(b_h.shape)}"
        )
    if not (np.isfinite(a_h).all() and np.isfinite(b_h).all()):
        return Comparison(False, float("inf"), tolerance, "non-finite hidden states")
    scale = max(float(np.abs(b_h).max()), float(np.abs(a_h).max()), 1e-6)
    difference = float(np.abs(a_h - b_h).max()) / scale
    return Comparison(
        difference <= tolerance,
        difference,
        tolerance,
        f"hidden states differ by {difference:.2e} of their scale (tolerance {tolerance:.0e})",
    )
