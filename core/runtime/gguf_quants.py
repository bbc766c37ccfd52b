"""Dequantize GGUF tensor data (ggml block formats) to float32, vectorized in torch.

Each block format follows ggml's ``dequantize_row_*`` (ggml-quants.c): a block
holds a float16 scale (and for the K formats a float16 min and 6-bit sub-block
scales and mins) and packed integer codes. The products are formed in the same
order as ggml's, ``(d * scale) * q - (dmin * min)``, so the float32 results are
bit-identical to the reference (tests/core/models/test_gguf_quants.py checks
them against the ``gguf`` package).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from core.errors import ModelImportError

# ggml type ids (enum ggml_type in ggml.h)
F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 = 0, 1, 2, 3, 6, 7, 8
Q4_K, Q5_K, Q6_K, BF16 = 12, 13, 14, 30
QK_K = 256

# type id -> (name, values per block, bytes per block)
BLOCKS: dict[int, tuple[str, int, int]] = {
    F32: ("F32", 1, 4),
    F16: ("F16", 1, 2),
    BF16: ("BF16", 1, 2),
    Q4_0: ("Q4_0", 32, 18),
    Q4_1: ("Q4_1", 32, 20),
    Q5_0: ("Q5_0", 32, 22),
    Q5_1: ("Q5_1", 32, 24),
    Q8_0: ("Q8_0", 32, 34),
    Q4_K: ("Q4_K", QK_K, 144),
    Q5_K: ("Q5_K", QK_K, 176),
    Q6_K: ("Q6_K", QK_K, 210),
}


def _f16(b: torch.Tensor) -> torch.Tensor:
    """Little-endian float16 from byte columns (n, 2) -> float32 (n, 1)."""
    return b.contiguous().view(torch.float16).float()


def _nibbles(qs: torch.Tensor) -> torch.Tensor:
    """(n, k) bytes -> (n, 2k) codes: the low nibbles first, then the high ones."""
    return torch.cat([qs & 0x0F, qs >> 4], dim=-1)


def _bits(b: torch.Tensor) -> torch.Tensor:
    """(n, k) bytes -> (n, 8k) bits, little-endian within each byte."""
    shifts = torch.arange(8, dtype=torch.uint8)
    return ((b.unsqueeze(-1) >> shifts) & 1).reshape(b.shape[0], -1)


def _q4_0(b: torch.Tensor) -> torch.Tensor:
    d = _f16(b[:, :2])
    q = _nibbles(b[:, 2:]).to(torch.int16) - 8
    return d * q.float()


def _q5_0(b: torch.Tensor) -> torch.Tensor:
    d = _f16(b[:, :2])
    high = _bits(b[:, 2:6])  # bit i is the fifth bit of value i
    q = (_nibbles(b[:, 6:]) | (high << 4)).to(torch.int16) - 16
    return d * q.float()


def _q4_1(b: torch.Tensor) -> torch.Tensor:
    d, m = _f16(b[:, :2]), _f16(b[:, 2:4])
    return d * _nibbles(b[:, 4:]).float() + m


def _q5_1(b: torch.Tensor) -> torch.Tensor:
    d, m = _f16(b[:, :2]), _f16(b[:, 2:4])
    q = _nibbles(b[:, 8:]) | (_bits(b[:, 4:8]) << 4)
    return d * q.float() + m


def _q8_0(b: torch.Tensor) -> torch.Tensor:
    d = _f16(b[:, :2])
    return b[:, 2:].contiguous().view(torch.int8).float() * d


def _k_scales(s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The eight 6-bit scales and mins packed into 12 bytes (get_scale_min_k4)."""
    lo, mid, top = s[:, 0:4], s[:, 4:8], s[:, 8:12]
    scales = torch.cat([lo & 0x3F, (top & 0x0F) | ((lo >> 6) << 4)], dim=-1)
    mins = torch.cat([mid & 0x3F, (top >> 4) | ((mid >> 6) << 4)], dim=-1)
    return scales.float(), mins.float()


def _k_codes4(qs: torch.Tensor) -> torch.Tensor:
    """128 bytes -> 8 sub-blocks of 32: per 32 bytes, their low nibbles, then their high."""
    n = qs.shape[0]
    q = qs.reshape(n, 4, 1, 32)
    return torch.cat([q & 0x0F, q >> 4], dim=2).reshape(n, 8, 32)


def _q4_k(b: torch.Tensor) -> torch.Tensor:
    n = b.shape[0]
    d, dmin = _f16(b[:, 0:2]), _f16(b[:, 2:4])
    sc, m = _k_scales(b[:, 4:16])
    q = _k_codes4(b[:, 16:144]).float()
    return ((d * sc).unsqueeze(-1) * q - (dmin * m).unsqueeze(-1)).reshape(n, QK_K)


def _q5_k(b: torch.Tensor) -> torch.Tensor:
    n = b.shape[0]
    d, dmin = _f16(b[:, 0:2]), _f16(b[:, 2:4])
    sc, m = _k_scales(b[:, 4:16])
    qh = b[:, 16:48]
    # sub-block j takes bit j of each of the 32 qh bytes as its fifth bit
    high = ((qh.unsqueeze(1) >> torch.arange(8, dtype=torch.uint8).reshape(1, 8, 1)) & 1) << 4
    q = (_k_codes4(b[:, 48:176]) | high).float()
    return ((d * sc).unsqueeze(-1) * q - (dmin * m).unsqueeze(-1)).reshape(n, QK_K)


def _q6_k(b: torch.Tensor) -> torch.Tensor:
    n = b.shape[0]
    ql, qh = b[:, 0:128].reshape(n, 2, 2, 32), b[:, 128:192].reshape(n, 2, 1, 32)
    scales = b[:, 192:208].contiguous().view(torch.int8).float()
    d = _f16(b[:, 208:210])
    # each half of 128 values: four runs of 32 whose low 4 bits come from ql
    # (low nibbles of both 32-byte rows, then high) and top 2 bits from qh
    low = torch.cat([ql & 0x0F, ql >> 4], dim=2)  # (n, 2, 4, 32)
    top = (qh >> torch.tensor([0, 2, 4, 6], dtype=torch.uint8).reshape(1, 1, 4, 1)) & 3
    q = ((low | (top << 4)).to(torch.int16) - 32).float().reshape(n, 16, 16)
    return ((d * scales).unsqueeze(-1) * q).reshape(n, QK_K)


_BLOCK_DECODERS: dict[int, Callable[[torch.Tensor], torch.Tensor]] = {
    Q4_0: _q4_0,
    Q4_1: _q4_1,
    Q5_0: _q5_0,
    Q5_1: _q5_1,
    Q8_0: _q8_0,
    Q4_K: _q4_k,
    Q5_K: _q5_k,
    Q6_K: _q6_k,
}

# Blocks decoded per step: bounds the temporaries of one big tensor (an embedding
# of 262k x 640 values is ~650k blocks) to tens of megabytes.
_STEP_BLOCKS = 1 << 16


def type_name(ggml_type: int) -> str:
    return BLOCKS[ggml_type][0] if ggml_type in BLOCKS else f"type {ggml_type}"


def dequantize(data: np.ndarray, ggml_type: int, shape: tuple[int, ...]) -> torch.Tensor:
    """A GGUF tensor's raw data -> float32 tensor of ``shape`` (row-major, PyTorch order)."""
    if ggml_type not in BLOCKS:
        raise ModelImportError(
            f"GGUF tensor type {ggml_type} is not supported; the importer reads "
            f"{', '.join(name for name, _, _ in BLOCKS.values())} (re-quantize the file to one "
            "of those, e.g. with llama.cpp's llama-quantize)"
        )
    count = int(np.prod(shape))
    raw = torch.from_numpy(np.ascontiguousarray(data).reshape(-1).view(np.uint8).copy())
    name, per_block, block_bytes = BLOCKS[ggml_type]
    if count % per_block or raw.numel() != count // per_block * block_bytes:
        raise ModelImportError(
            f"a {name} tensor of shape {shape} must hold {count // per_block * block_bytes} "
            f"bytes; it holds {raw.numel()} (the file is damaged or truncated)"
        )
    if ggml_type == F32:
        return raw.view(torch.float32).reshape(shape)
    if ggml_type == F16:
        return raw.view(torch.float16).float().reshape(shape)
    if ggml_type == BF16:
        return raw.view(torch.bfloat16).float().reshape(shape)
    blocks = raw.reshape(-1, block_bytes)
    decode = _BLOCK_DECODERS[ggml_type]
    out = torch.empty(blocks.shape[0], per_block, dtype=torch.float32)
    for start in range(0, blocks.shape[0], _STEP_BLOCKS):
        out[start : start + _STEP_BLOCKS] = decode(blocks[start : start + _STEP_BLOCKS])
    return out.reshape(shape)
