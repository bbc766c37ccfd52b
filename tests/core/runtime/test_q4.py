"""The 4-bit recipe (``int4-g32-int8-head``, catalogued as llama-q4): its rounding, its
kernels against the plain fallback, its own reference, its footprint, and on the real
model its quality against fp32 and the doctor's probe."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch
from torch import nn

from core.errors import ConfigError
from core.runtime import SessionManager, Shard
from core.runtime.quality import chain_logits, perplexity, top1_agreement
from core.runtime.quant import INT4_G32_INT8_HEAD
from core.runtime.quant4 import (
    GROUP,
    Int4Linear,
    Int8Embedding,
    Int8Rows,
    cpu_kernel_works,
    dequantize_groups,
    int8pack_works,
    pack_nibbles,
    quantize_groups,
    unpack_nibbles,
)
from tests.core.runtime.conftest import build_tiny, reference_model
from tests.core.runtime.test_int8 import PROMPTS

DATA = Path(__file__).resolve().parents[2] / "data"
CPU = torch.device("cpu")
needs_cpu_kernel = pytest.mark.skipif(not cpu_kernel_works(), reason="no CPU int4 kernel")


def _weight(rows: int, cols: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(rows, cols, generator=g) * 0.05
    w[3, :GROUP] = 0.25  # a constant group
    w[5] *= 40.0  # a row far larger than the others
    return w


def _pair(weight: torch.Tensor) -> tuple[Int4Linear, Int4Linear]:
    """The same quantized weight twice: on the CPU kernel and on the plain fallback."""
    kernel, plain = Int4Linear.from_linear(weight, None), Int4Linear.from_linear(weight, None)
    kernel.pack_for(CPU)
    return kernel, plain


def test_group_rounding_error_is_at_most_half_a_step_and_bfloat16_of_the_zero() -> None:
    w = _weight(48, 5 * GROUP)
    q, scale_zero = quantize_groups(w)
    assert q.dtype == torch.uint8 and int(q.max()) <= 15
    assert scale_zero.shape == (5, 48, 2) and scale_zero.dtype == torch.bfloat16
    assert torch.equal(unpack_nibbles(pack_nibbles(q)), q)
    back = dequantize_groups(q, scale_zero)
    step = scale_zero[..., 0].float().t().repeat_interleave(GROUP, dim=1)  # (O, I)
    zero = scale_zero[..., 1].float().t().abs().repeat_interleave(GROUP, dim=1)
    # half a step, plus what rounding scale and zero to bfloat16 moved the grid by
    bound = step * (0.5 + 8 * 2**-8) + zero * 2**-8 + 1e-7
    assert bool(((back - w).abs() <= bound).all())
    assert torch.equal(back[3, :GROUP], torch.full((GROUP,), 0.25))  # constant: exact


@needs_cpu_kernel
@pytest.mark.parametrize("rows", [1, 7, 40])
def test_the_cpu_int4_kernel_computes_what_the_plain_fallback_computes(rows: int) -> None:
    kernel, plain = _pair(_weight(96, 6 * GROUP))
    assert kernel.kernel == "cpu" and plain.kernel == "plain"
    x = torch.randn(rows, 6 * GROUP, generator=torch.Generator().manual_seed(1))
    want = plain.matmul(x)  # float32 product of the bfloat16 activations
    got = kernel.matmul(x)  # the kernel's, rounded to bfloat16 on its way out
    torch.testing.assert_close(got, want, atol=1e-3, rtol=2**-7)


@needs_cpu_kernel
def test_a_row_computes_the_same_whatever_shares_its_batch() -> None:
    """What makes cached decode equal the full forward: row-independent products."""
    kernel, _ = _pair(_weight(64, 4 * GROUP))
    x = torch.randn(37, 4 * GROUP, generator=torch.Generator().manual_seed(2))
    alone = torch.cat([kernel.matmul(x[i : i + 1]) for i in range(37)])
    assert torch.equal(kernel.matmul(x), alone)


def test_a_shape_the_cpu_kernel_refuses_keeps_the_plain_fallback() -> None:
    layer = Int4Linear.from_linear(_weight(40, 2 * GROUP), None)  # 40 rows: not a multiple of 16
    layer.pack_for(CPU)
    assert layer.kernel == "plain"
    x = torch.randn(3, 2 * GROUP)
    w = dequantize_groups(*quantize_groups(_weight(40, 2 * GROUP)))
    torch.testing.assert_close(layer.matmul(x), x.bfloat16().float() @ w.t())


def test_the_int8_head_kernel_and_its_fallback_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    head = Int8Rows.from_linear(_weight(256, 64), None)
    x = torch.randn(5, 64, generator=torch.Generator().manual_seed(3))
    assert int8pack_works("cpu")
    got = head.matmul(x)
    monkeypatch.setattr("core.runtime.quant4.int8pack_works", lambda _: False)
    want = head.matmul(x)
    torch.testing.assert_close(got, want, atol=1e-3, rtol=2**-7)
    rows = head.rows(torch.tensor([0, 5]))
    torch.testing.assert_close(rows, head.qweight[[0, 5]].float() * head.scale[[0, 5], None])


def q4_reference(folder: Path) -> nn.Module:
    """transformers' model with every block projection and the LM head (tied: the
    embedding too) replaced by what the q4 recipe rounds them to."""
    model = copy.deepcopy(reference_model(folder))
    with torch.no_grad():
        for name, module in model.named_modules():
            if isinstance(module, nn.Linear) and "layers." in name:
                w = dequantize_groups(*quantize_groups(module.weight))
                module.weight = nn.Parameter(w)
        head = Int8Rows.from_linear(model.lm_head.weight, None)
        model.lm_head.weight = nn.Parameter(head.qweight.float() * head.scale.float()[:, None])
        model.get_input_embeddings().weight = model.lm_head.weight
    return model.eval()


def test_q4_shard_chain_matches_its_own_reference_logits(tiny_llama: Path) -> None:
    ids = torch.randint(0, 256, (1, 9), generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        expected = q4_reference(tiny_llama)(ids).logits.float()
        shards = [
            Shard.load(tiny_llama, 0, 2, weight_quantization=INT4_G32_INT8_HEAD),
            Shard.load(tiny_llama, 2, 4, weight_quantization=INT4_G32_INT8_HEAD),
        ]
        got = chain_logits(shards, ids[0].tolist())  # (T, V)
    # the recipe rounds activations to bfloat16 for each product; the reference does not
    torch.testing.assert_close(got, expected[0], atol=3e-2, rtol=3e-2)


def test_q4_shard_holds_under_a_fifth_of_the_bytes_and_one_table_for_a_tied_head(
    tiny_llama: Path,
) -> None:
    dense = Shard.load(tiny_llama, 0, 4)
    q4 = Shard.load(tiny_llama, 0, 4, weight_quantization=INT4_G32_INT8_HEAD)
    assert q4.weight_quantization == INT4_G32_INT8_HEAD
    assert all(isinstance(b.mlp.down, Int4Linear) for b in q4.layers)  # type: ignore[union-attr]
    assert isinstance(q4.embed, Int8Embedding) and q4.embed.table is q4.lm_head
    assert q4.weight_bytes() < 0.3 * dense.weight_bytes()  # tiny: norms weigh more


def test_q4_cached_decode_equals_the_full_forward(tiny_untied: Path) -> None:
    shard = Shard.load(tiny_untied, 0, 4, weight_quantization=INT4_G32_INT8_HEAD)
    assert isinstance(shard.embed, Int8Embedding) and shard.embed.table is not shard.lm_head
    ids = torch.randint(0, 256, (1, 12), generator=torch.Generator().manual_seed(4))
    manager = SessionManager(shard)
    with torch.inference_mode():
        full = manager.open(12).step(ids, return_logits=True).logits
        session = manager.open(12)
        parts = [session.step(ids[:, :5], return_logits=True).logits]
        parts += [session.step(ids[:, t : t + 1], return_logits=True).logits for t in range(5, 12)]
    assert full is not None
    steps = torch.cat([p for p in parts if p is not None], dim=1)
    torch.testing.assert_close(steps, full, atol=1e-4, rtol=1e-4)


def test_q4_needs_float32_compute_and_widths_in_whole_groups(tmp_path: Path) -> None:
    odd = build_tiny(tmp_path / "odd", intermediate_size=72)
    with pytest.raises(ConfigError) as narrow:
        Shard.load(odd, 0, 2, weight_quantization=INT4_G32_INT8_HEAD)
    assert narrow.value.reason == "bad-quantization" and "72" in str(narrow.value)
    with pytest.raises(ConfigError) as bf16:
        Shard.load(odd, 0, 2, compute_dtype="bfloat16", weight_quantization=INT4_G32_INT8_HEAD)
    assert bf16.value.reason == "bad-quantization"


# -- quality on the real default model ---------------------------------------------


@pytest.mark.slow
def test_q4_perplexity_is_within_five_percent_of_fp32_and_top1_mostly_agrees(
    default_model_dir: Path,
) -> None:
    from core.models.tokenizer import ChatTokenizer

    tok = ChatTokenizer.from_folder(default_model_dir)
    ids = tok.encode((DATA / "perplexity_text.txt").read_text(encoding="utf-8"))
    fp32 = [Shard.load(default_model_dir, 0, 15), Shard.load(default_model_dir, 15, 30)]
    q4 = [
        Shard.load(default_model_dir, 0, 15, weight_quantization=INT4_G32_INT8_HEAD),
        Shard.load(default_model_dir, 15, 30, weight_quantization=INT4_G32_INT8_HEAD),
    ]
    with torch.inference_mode():
        ppl32, ppl4 = perplexity(fp32, ids), perplexity(q4, ids)
        agreement = top1_agreement(fp32, q4, [tok.encode(p) for p in PROMPTS])
    print(f"q4: perplexity fp32 {ppl32:.3f} q4 {ppl4:.3f}; top-1 agreement {agreement:.3f}")
    assert abs(ppl4 - ppl32) / ppl32 < 0.05
    assert agreement >= 0.8
    fp32_bytes = sum(s.weight_bytes() for s in fp32)
    assert sum(s.weight_bytes() for s in q4) <= 0.2 * fp32_bytes


@pytest.mark.slow
@pytest.mark.parametrize(("start", "end"), [(0, 15), (15, 30)])
def test_the_catalogued_q4_recipe_passes_the_doctors_probe(
    default_model_dir: Path, start: int, end: int
) -> None:
    """What admission runs before a node registers: every check passes for llama-q4."""
    from core.doctor.probe import Deadline, ProbePlan, run_probe

    shard = Shard.load(default_model_dir, start, end, weight_quantization=INT4_G32_INT8_HEAD)
    outcome = run_probe(shard, ProbePlan(), Deadline(600))
    assert outcome.completed
    assert [c for c in outcome.checks if not c.passed] == []


def test_the_doctor_judges_q4_by_its_bfloat16_products(tiny_llama: Path) -> None:
    from core.doctor.probe import TOLERANCE

    q4 = Shard.load(tiny_llama, 0, 2, weight_quantization=INT4_G32_INT8_HEAD)
    assert q4.compute_dtype == torch.float32 and q4.product_dtype == torch.bfloat16
    assert Shard.load(tiny_llama, 0, 2).product_dtype == torch.float32
    assert TOLERANCE[q4.product_dtype] > TOLERANCE[q4.compute_dtype]
