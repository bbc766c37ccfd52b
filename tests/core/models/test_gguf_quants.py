"""The block dequantizers equal the ``gguf`` package's reference, bit for bit,
and decode hand-built blocks to the values written into them."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gguf import GGMLQuantizationType as T
from gguf import quants

from core.errors import ModelImportError
from core.runtime import gguf_quants as gq

# byte offsets of the float16 scales in each block format (random bytes elsewhere)
_F16_OFFSETS = {
    gq.Q4_0: (0,),
    gq.Q4_1: (0, 2),
    gq.Q5_0: (0,),
    gq.Q5_1: (0, 2),
    gq.Q8_0: (0,),
    gq.Q4_K: (0, 2),
    gq.Q5_K: (0, 2),
    gq.Q6_K: (208,),
}


def _random_blocks(ggml_type: int, n_blocks: int, seed: int) -> np.ndarray:
    _, _, block_bytes = gq.BLOCKS[ggml_type]
    rng = np.random.default_rng(seed)
    blocks = rng.integers(0, 256, size=(n_blocks, block_bytes), dtype=np.uint8)
    for offset in _F16_OFFSETS[ggml_type]:  # finite scales of varied magnitude and sign
        scale = (rng.standard_normal(n_blocks) * 10.0 ** rng.integers(-4, 2, n_blocks)).astype(
            np.float16
        )
        blocks[:, offset : offset + 2] = scale.view(np.uint8).reshape(n_blocks, 2)
    return blocks


@pytest.mark.parametrize("ggml_type", sorted(_F16_OFFSETS))
def test_block_formats_equal_the_gguf_reference_bit_for_bit(ggml_type: int) -> None:
    _, per_block, _ = gq.BLOCKS[ggml_type]
    n_blocks = 3 * 64  # a (3 x 64 * per_block) matrix
    blocks = _random_blocks(ggml_type, n_blocks, seed=ggml_type)
    data = blocks.reshape(3, -1)
    ours = gq.dequantize(data, ggml_type, (3, 64 * per_block)).numpy()
    reference = quants.dequantize(data, T(ggml_type)).astype(np.float32)
    assert reference.shape == ours.shape
    assert np.isfinite(ours).all()
    assert np.array_equal(ours.view(np.uint32), reference.view(np.uint32))


@pytest.mark.parametrize("ggml_type", [gq.Q4_0, gq.Q4_1, gq.Q5_0, gq.Q5_1, gq.Q8_0])
def test_quantized_by_gguf_round_trips_through_ours(ggml_type: int) -> None:
    values = np.random.default_rng(1).standard_normal((4, 256)).astype(np.float32)
    packed = quants.quantize(values, T(ggml_type))
    ours = gq.dequantize(packed, ggml_type, (4, 256)).numpy()
    assert np.array_equal(ours, quants.dequantize(packed, T(ggml_type)))
    levels = {gq.Q4_0: 7, gq.Q4_1: 7, gq.Q5_0: 15, gq.Q5_1: 15, gq.Q8_0: 127}[ggml_type]
    step = np.abs(values).max() / levels
    assert np.abs(ours - values).max() <= step  # and close to what was quantized


def test_float_types() -> None:
    values = np.random.default_rng(2).standard_normal((5, 7)).astype(np.float32)
    assert torch.equal(gq.dequantize(values, gq.F32, (5, 7)), torch.from_numpy(values))
    half = values.astype(np.float16)
    assert np.array_equal(gq.dequantize(half, gq.F16, (5, 7)).numpy(), half.astype(np.float32))
    bf16 = torch.from_numpy(values).to(torch.bfloat16)
    raw = bf16.view(torch.int16).numpy().view(np.uint8)
    assert torch.equal(gq.dequantize(raw, gq.BF16, (5, 7)), bf16.float())
    reference = quants.dequantize(raw.reshape(5, 14), T.BF16)
    assert np.array_equal(gq.dequantize(raw, gq.BF16, (5, 7)).numpy(), reference)


def test_hand_built_q4_0_and_q8_0_blocks() -> None:
    # Q4_0: d = 0.5, codes 0..15 in the low nibbles then 15..0 in the high ones
    low, high = np.arange(16, dtype=np.uint8), np.arange(15, -1, -1, dtype=np.uint8)
    block = np.concatenate([np.array([0.5], np.float16).view(np.uint8), low | (high << 4)])
    expected = 0.5 * (np.concatenate([low, high]).astype(np.float32) - 8)
    assert np.array_equal(gq.dequantize(block, gq.Q4_0, (32,)).numpy(), expected)
    # Q8_0: d = 0.25, codes -16..15
    codes = np.arange(-16, 16, dtype=np.int8)
    block = np.concatenate([np.array([0.25], np.float16).view(np.uint8), codes.view(np.uint8)])
    assert np.array_equal(gq.dequantize(block, gq.Q8_0, (32,)).numpy(), 0.25 * codes)


def test_hand_built_q4_k_block() -> None:
    # d = 1, dmin = 0.5; sub-block j has scale j+1 and min 2j; every code is 3
    scales, mins = np.arange(1, 9), np.arange(0, 16, 2)
    packed = np.zeros(12, np.uint8)
    packed[0:4] = scales[:4] | ((scales[4:] >> 4) << 6)
    packed[4:8] = mins[:4] | ((mins[4:] >> 4) << 6)
    packed[8:12] = (scales[4:] & 0x0F) | ((mins[4:] & 0x0F) << 4)
    block = np.concatenate(
        [np.array([1.0, 0.5], np.float16).view(np.uint8), packed, np.full(128, 0x33, np.uint8)]
    )
    expected = np.repeat(scales * 3.0 - 0.5 * mins, 32).astype(np.float32)
    assert np.array_equal(gq.dequantize(block, gq.Q4_K, (256,)).numpy(), expected)


def test_unsupported_type_and_short_data_are_refused_clearly() -> None:
    with pytest.raises(ModelImportError, match="not supported"):
        gq.dequantize(np.zeros(20, np.uint8), int(T.Q2_K), (256,))
    with pytest.raises(ModelImportError, match="damaged or truncated"):
        gq.dequantize(np.zeros(17, np.uint8), gq.Q4_0, (32,))
