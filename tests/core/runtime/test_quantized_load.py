"""A quantized shard is quantized as it is read, one layer at a time (Shard.load), and
holds exactly what the earlier load built by reading the whole shard in float32 and
quantizing it afterwards: the same modules, the same packed weights, the same logits.

``old_load`` below is that earlier path, kept as the reference."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from core.runtime import SessionManager, Shard
from core.runtime.fbgemm_int8 import PackedInt8Linear
from core.runtime.quality import chain_logits
from core.runtime.quant import (
    INT8_PER_CHANNEL,
    quantize_linears,
    quantize_per_channel,
    row_blocks,
)
from core.runtime.quant4 import (
    INT4_G32_INT8_HEAD,
    Int4Linear,
    Int8Embedding,
    Int8Rows,
    quantize_groups,
)
from core.runtime.quant_digits import Int8DigitsLinear
from tests.core.runtime.conftest import build_tiny
from tests.support.load_memory import load_growth

SCHEMES = [INT4_G32_INT8_HEAD, INT8_PER_CHANNEL]
MiB = 1024 * 1024


def old_load(
    folder: Path, start: int, end: int, scheme: str, monkeypatch: pytest.MonkeyPatch
) -> Shard:
    """The whole shard read in float32, then every projection and the head quantized (the
    load before it quantized per layer); the CPU layout change comes last, as it did."""
    with monkeypatch.context() as patch:
        patch.setattr(Shard, "_weights_in_by_out", lambda self: None)
        shard = Shard.load(folder, start, end)
    names = [
        f"layers.{i}.{p}"
        for i in range(len(shard.layers))
        for p in ("attn.qkv", "attn.o_proj", "mlp.gate_up", "mlp.down")
    ]
    if scheme == INT8_PER_CHANNEL:
        if shard.lm_head is not None:
            names.append("lm_head")
        quantize_linears(shard, names, Int8DigitsLinear)
    else:
        quantize_linears(shard, names, Int4Linear)
        head, embed = shard.lm_head, shard.embed
        tied: Int8Rows | None = None
        if isinstance(head, nn.Linear):
            shard.lm_head = Int8Rows.from_linear(head.weight.data, head.bias)
            if embed is not None and head.weight is embed.weight:
                tied = shard.lm_head
        if isinstance(embed, nn.Embedding):
            shard.embed = Int8Embedding(tied or Int8Rows.from_linear(embed.weight.data, None))
    shard.weight_quantization = scheme
    for module in shard.modules():
        if isinstance(module, Int4Linear):
            module.pack_for(torch.device("cpu"))
    shard._weights_in_by_out()
    return shard.requires_grad_(False).eval()


def _contents(shard: Shard) -> dict[str, tuple[str, torch.Tensor | None]]:
    """Each module's type and what it computes from: its tensors, fbgemm's unpacked."""
    out: dict[str, tuple[str, torch.Tensor | None]] = {}
    for name, module in shard.named_modules():
        out[name] = (f"{type(module).__name__} {getattr(module, 'kernel', '')}", None)
        if isinstance(module, PackedInt8Linear):
            out[name + "#int8"] = ("int8", module.int8_weight())
        for key, tensor in [
            *module.named_parameters(recurse=False),
            *module.named_buffers(recurse=False),
        ]:
            if tensor is not None:
                out[f"{name}.{key}"] = (str(tensor.dtype), tensor.detach())
    return out


def _assert_same_shard(new: Shard, old: Shard) -> None:
    got, want = _contents(new), _contents(old)
    assert list(got) == list(want)
    for name, (kind, tensor) in want.items():
        assert got[name][0] == kind, name
        if tensor is not None:
            other = got[name][1]
            assert other is not None and torch.equal(other, tensor), name
    assert new.weight_quantization == old.weight_quantization
    assert new.weight_bytes() == old.weight_bytes()
    assert new.tensor_names == old.tensor_names and new.files_opened == old.files_opened
    if isinstance(old.embed, Int8Embedding):
        assert isinstance(new.embed, Int8Embedding)
        assert (new.embed.table is new.lm_head) == (old.embed.table is old.lm_head)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("folder", ["tiny_llama", "tiny_untied"])  # tied head, own head
def test_a_per_layer_quantized_load_equals_quantizing_the_whole_float32_shard(
    scheme: str, folder: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    model: Path = request.getfixturevalue(folder)
    for start, end in [(0, 4), (0, 2), (2, 4), (1, 3)]:
        _assert_same_shard(
            Shard.load(model, start, end, weight_quantization=scheme),
            old_load(model, start, end, scheme, monkeypatch),
        )
    ids = torch.randint(0, 256, (1, 9), generator=torch.Generator().manual_seed(5))
    with torch.inference_mode():
        pair = [Shard.load(model, a, b, weight_quantization=scheme) for a, b in [(0, 2), (2, 4)]]
        old_pair = [old_load(model, a, b, scheme, monkeypatch) for a, b in [(0, 2), (2, 4)]]
        assert torch.equal(
            chain_logits(pair, ids[0].tolist()), chain_logits(old_pair, ids[0].tolist())
        )
        steps = []
        for shard in (
            Shard.load(model, 0, 4, weight_quantization=scheme),
            old_load(model, 0, 4, scheme, monkeypatch),
        ):
            session = SessionManager(shard).open(9)
            logits = [session.step(ids[:, :5], return_logits=True).logits]
            logits += [
                session.step(ids[:, t : t + 1], return_logits=True).logits for t in range(5, 9)
            ]
            steps.append(torch.cat([x for x in logits if x is not None], dim=1))
    assert steps[0].shape == (1, 9, 256) and torch.equal(steps[0], steps[1])


def test_each_layer_is_quantized_before_the_next_is_read(
    tiny_untied: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When ``on_layer`` reports layer k read, layers < k hold their 4-bit modules (and k
    too): no float32 projection is left behind to be quantized at the end."""
    seen: list[tuple[int, int, list[str]]] = []
    loading: list[Shard] = []
    real_read = Shard._read_weights

    def spy(self: Shard, *args: object, **kwargs: object) -> list[str]:
        loading.append(self)
        return real_read(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Shard, "_read_weights", spy)

    def on_layer(done: int, total: int) -> None:
        kinds = [type(b.mlp.down).__name__ for b in loading[0].layers]  # type: ignore[union-attr]
        seen.append((done, total, kinds))

    shard = Shard.load(tiny_untied, 0, 3, weight_quantization=INT4_G32_INT8_HEAD, on_layer=on_layer)
    assert [(d, t) for d, t, _ in seen] == [(1, 3), (2, 3), (3, 3)]
    for done, _, kinds in seen:
        assert kinds[:done] == ["Int4Linear"] * done and kinds[done:] == ["Linear"] * (3 - done)
    assert isinstance(shard.embed, Int8Embedding)


def test_quantizing_in_row_blocks_gives_the_numbers_of_one_block(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each scheme rounds every row on its own, so bounding the temporaries by quantizing
    row blocks changes no number (the default block holds all 70 rows of this matrix)."""
    w = torch.randn(70, 96, generator=torch.Generator().manual_seed(6)) * 0.05
    w[2] = 0.0  # an all-zero row
    w[3, :32] = 0.25  # a constant group
    w[5] *= 40.0

    def quantized() -> list[torch.Tensor]:
        head = Int8Rows.from_linear(w, None)
        return [*quantize_groups(w), *quantize_per_channel(w), head.qweight, head.scale]

    whole = quantized()
    monkeypatch.setattr("core.runtime.quant.QUANTIZE_BLOCK_BYTES", 4 * 96 * 8)  # 8 rows
    assert row_blocks(70, 96)[-1] == (64, 6)
    for got, want in zip(quantized(), whole, strict=True):
        assert got.dtype == want.dtype and torch.equal(got, want)


# A random Llama of 176 MiB in float32: 14 layers of 12 MiB, its own LM head.
BIG = dict(
    hidden_size=512,
    intermediate_size=1536,
    num_hidden_layers=14,
    num_attention_heads=4,
    num_key_value_heads=2,
    vocab_size=2048,
    tie_word_embeddings=False,
)


@pytest.mark.slow  # two loads in fresh interpreters: ~10 s
@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/status")
def test_a_q4_load_peaks_far_below_the_float32_shard(tiny_llama: Path, tmp_path: Path) -> None:
    """Peak anonymous memory of the load in a subprocess (tests/support/load_memory.py):
    quantizing as it reads, a q4 load holds its packed bytes plus about one layer in
    float32. The float32 load of the same shard, measured the same way, must reach the
    shard's float32 size, so the measurement sees what it is meant to."""
    model = build_tiny(tmp_path / "big", **BIG)
    fp32 = load_growth("none", tiny_llama, model, 0, 14)
    q4 = load_growth(INT4_G32_INT8_HEAD, tiny_llama, model, 0, 14)
    report = (
        f"float32 shard {fp32['weight_bytes'] / MiB:.0f} MiB, peak growth "
        f"{fp32['growth'] / MiB:.0f} MiB; q4 shard {q4['weight_bytes'] / MiB:.0f} MiB, peak "
        f"growth {q4['growth'] / MiB:.0f} MiB"
    )
    print(report)
    assert fp32["growth"] > 0.9 * fp32["weight_bytes"], report
    assert q4["growth"] < 0.5 * fp32["weight_bytes"], report
