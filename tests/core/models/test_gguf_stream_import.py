"""The GGUF import streams: each tensor is decoded, written and dropped in turn, so the
imported file equals the whole-model decode tensor for tensor while the import's memory
stays near one tensor's, not the model's float32 size."""

from __future__ import annotations

import sys
from pathlib import Path

import gguf
import numpy as np
import pytest
import torch
from gguf import GGMLQuantizationType as T
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from core.models.gguf_import import dequantized_tensors, import_gguf, output_plan
from core.runtime.gguf_arch import hf_config_from_gguf
from tests.core.models.test_gguf_families import add_byte_tokenizer, write_gguf
from tests.support.import_memory import peak_growth

MiB = 1024 * 1024


@pytest.mark.parametrize("arch", ["llama", "gemma3"])  # q/k rows permuted; norms shifted
def test_streamed_import_equals_the_whole_model_decode(arch: str, tmp_path: Path) -> None:
    path = write_gguf(tmp_path / f"{arch}.gguf", arch)
    folder = import_gguf(path, tmp_path / arch, model_id=f"tiny-{arch}", label=arch, unpack=True)
    reader = gguf.GGUFReader(str(path))
    config = hf_config_from_gguf(reader)
    whole = dequantized_tensors(reader, config)
    ours = load_file(str(folder / "model.safetensors"))
    assert set(ours) == set(whole)
    for name, tensor in whole.items():
        assert ours[name].dtype == torch.float32
        assert torch.equal(ours[name], tensor), name
    plan = output_plan(reader, config)
    assert [(p.name, p.shape) for p in plan] == sorted(
        (n, tuple(t.shape)) for n, t in whole.items()
    )
    with safe_open(str(folder / "model.safetensors"), framework="pt") as f:
        assert f.metadata() == {"format": "pt"}
    # byte for byte the file the whole-model path wrote: the model's content digest (and so
    # every recipe fingerprint over it) is the same as before, whichever version imported it
    save_file(whole, str(tmp_path / "whole.safetensors"), metadata={"format": "pt"})
    written = (folder / "model.safetensors").read_bytes()
    assert written == (tmp_path / "whole.safetensors").read_bytes()


HIDDEN, FFN, HEADS, KV_HEADS, LAYERS = 512, 2048, 4, 2, 12


def _write_big_q4_0(path: Path) -> tuple[int, int]:
    """A random Llama GGUF with Q4_0 matrices; (model's float32 bytes, largest tensor's)."""
    rng = np.random.default_rng(0)
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_context_length(128)
    writer.add_embedding_length(HIDDEN)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(KV_HEADS)
    writer.add_layer_norm_rms_eps(1e-6)
    tokens = add_byte_tokenizer(writer)
    sizes: list[int] = []

    def q4_0(name: str, rows: int, cols: int) -> None:
        blocks = rng.integers(0, 256, size=(rows * cols // 32, 18), dtype=np.uint8)
        blocks[:, :2] = np.full(1, 0.01, np.float16).view(np.uint8)  # every block's scale
        writer.add_tensor(name, blocks.reshape(rows, -1), raw_dtype=T.Q4_0)
        sizes.append(rows * cols * 4)

    def f32(name: str, shape: tuple[int, ...]) -> None:
        writer.add_tensor(name, rng.standard_normal(shape).astype(np.float32))
        sizes.append(int(np.prod(shape)) * 4)

    f32("token_embd.weight", (len(tokens), HIDDEN))
    f32("output_norm.weight", (HIDDEN,))
    head_dim = HIDDEN // HEADS
    for i in range(LAYERS):
        b = f"blk.{i}."
        f32(b + "attn_norm.weight", (HIDDEN,))
        f32(b + "ffn_norm.weight", (HIDDEN,))
        q4_0(b + "attn_q.weight", HEADS * head_dim, HIDDEN)
        q4_0(b + "attn_k.weight", KV_HEADS * head_dim, HIDDEN)
        q4_0(b + "attn_v.weight", KV_HEADS * head_dim, HIDDEN)
        q4_0(b + "attn_output.weight", HIDDEN, HEADS * head_dim)
        q4_0(b + "ffn_gate.weight", FFN, HIDDEN)
        q4_0(b + "ffn_up.weight", FFN, HIDDEN)
        q4_0(b + "ffn_down.weight", HIDDEN, FFN)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return sum(sizes), max(sizes)


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/status")
def test_streamed_import_peaks_near_one_tensor_not_the_whole_model(tmp_path: Path) -> None:
    """Peak anonymous resident memory in a subprocess (tests/support/import_memory.py
    says why not tracemalloc or ru_maxrss: under load ru_maxrss swung between 45 and 300
    MiB across runs). The streamed import may use a few tensors plus a fixed slack. The
    old whole-model path, measured the same way, must reach the model's float32 size, so
    the measurement sees what it is meant to."""
    small = write_gguf(tmp_path / "small.gguf", "llama")
    big = tmp_path / "big.gguf"
    model_bytes, largest = _write_big_q4_0(big)
    file_bytes = big.stat().st_size
    streamed = peak_growth("stream", small, big, tmp_path / "stream")
    whole = peak_growth("whole", small, big, tmp_path / "whole")
    report = (
        f"model {model_bytes / MiB:.0f} MiB fp32, largest {largest / MiB:.0f} MiB, file "
        f"{file_bytes / MiB:.0f} MiB; peak growth streamed {streamed / MiB:.0f} MiB, "
        f"whole {whole / MiB:.0f} MiB"
    )
    print(report)
    assert whole > model_bytes * 0.9, report
    assert streamed < 3 * largest + 32 * MiB, report
    assert streamed < model_bytes // 4, report
