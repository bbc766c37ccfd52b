"""Do two nodes' answers to the same hop input agree, within the recipe's tolerance?

Two honest nodes never return bit-identical hidden states: thread counts and
kernels reorder float sums. So agreement is closeness, and how close depends
on the recipe's compute dtype (an axis of the recipe, so part of what nodes
of one fingerprint share): float32 rounding is ~1e-7 relative, bfloat16 ~1e-2.
The bound is relative to the tensor's own scale, because hidden-state
magnitudes grow through the layers.

A last hop answers with everything that decides a token (the gateway samples from
it): its greedy token(s), its top ids and their log-probabilities. Two honest nodes
give the same token unless its best two log-probs lie within the log-prob tolerance
(a near tie); the same log-prob for every token either lists, within that tolerance;
the same top-k set and order wherever the log-prob gaps exceed it. A verify step's
kept drafts and token must match exactly, as a greedy token did before.
"""

from __future__ import annotations

import math
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
# A last hop's log-probs: nats allowed per unit of the recipe's relative tolerance, and
# the least allowed (float32 honest nodes differ by ~1e-5 nats; bfloat16 by ~0.1).
LOGPROB_NATS_PER_TOLERANCE = 10.0
MIN_LOGPROB_TOLERANCE = 0.01


def logprob_tolerance(tolerance: float) -> float:
    """Nats two honest nodes' log-probabilities of one token may differ by."""
    return max(MIN_LOGPROB_TOLERANCE, LOGPROB_NATS_PER_TOLERANCE * tolerance)


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
        return compare_last_hop(first, second, tolerance=tolerance, max_bytes=max_bytes)
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


def compare_last_hop(
    observed: bytes, replayed: bytes, *, tolerance: float, max_bytes: int
) -> Comparison:
    """The audited last hop's reply against a replay's (which may list more top ids: the
    audited reply's k first are compared, the rest bound what it may have left out)."""
    a = wire_frames.decode_last_hop(observed, max_bytes=max_bytes, batch_size=1)
    b = wire_frames.decode_last_hop(replayed, max_bytes=max_bytes, batch_size=1)
    nats = logprob_tolerance(tolerance)
    a_top = list(zip(a.top_ids[0], a.top_logprobs[0], strict=True))
    b_top = list(zip(b.top_ids[0], b.top_logprobs[0], strict=True))
    problem = _token_problem(a.token_ids, b.token_ids, dict(b_top), nats)
    problem = problem or _top_problem(a_top, b_top, nats)
    if problem:
        return Comparison(False, 1.0, nats, problem)
    return Comparison(
        True, 0.0, nats, f"tokens {a.token_ids}, top {len(a_top)} within {nats:.2g} nats"
    )


def _close(x: float, y: float, nats: float) -> bool:
    return x == y or (math.isfinite(x) and math.isfinite(y) and abs(x - y) <= nats)


def _token_problem(
    a: list[int], b: list[int], reference: dict[int, float], nats: float
) -> str | None:
    if a == b:
        return None
    tie = len(a) == len(b) == 1 and a[0] in reference and b[0] in reference
    if tie and _close(reference[a[0]], reference[b[0]], nats):  # either is greedy
        return None
    return f"greedy tokens {a} and {b}"


def _top_problem(
    a_top: list[tuple[int, float]], b_top: list[tuple[int, float]], nats: float
) -> str | None:
    """What in the audited top list (ids, log-probs) no honest node would send."""
    k = len(a_top)
    if len(b_top) < k:
        return f"{k} top log-probs sent, the replay has {len(b_top)}"
    reference = dict(b_top)  # the replay's whole list
    floor = b_top[-1][1] if b_top else -math.inf  # a token not listed is at most this
    for token, logprob in a_top:
        truth = reference.get(token)
        if truth is None:
            if not (math.isfinite(logprob) and logprob <= floor + nats):
                return f"token {token} sent at log-prob {logprob:.4g}, replayed below {floor:.4g}"
        elif not _close(logprob, truth, nats):
            return f"token {token} sent at log-prob {logprob:.4g}, replayed at {truth:.4g}"
    sent = {token for token, _ in a_top}
    least = a_top[-1][1] if a_top else math.inf
    for token, truth in b_top[:k]:
        if token not in sent and truth > least + nats:
            return f"token {token} (log-prob {truth:.4g}) left out of the top {k}"
    for i, (first, _) in enumerate(a_top):
        for later, _ in a_top[i + 1 :]:
            both = first in reference and later in reference
            if both and reference[later] > reference[first] + nats:
                return f"top ids out of order: {later} ranked after {first}"
    return None
