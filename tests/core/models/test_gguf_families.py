"""GGUF import of every supported architecture: tiny random models written as GGUF the way
llama.cpp's converter writes them (llama's q/k rows permuted, Gemma's norms stored as 1 + w),
their tensors in F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q8_0, Q4_K, Q5_K and Q6_K. Imported, the
runtime's logits equal those of transformers loading the same file (with its own GGUF reader
and torch dequantizers), and the imported weights equal transformers' bit for bit."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import gguf
import numpy as np
import pytest
import torch
from gguf import GGMLQuantizationType as T
from safetensors.torch import load_file

from core.errors import UnsupportedArchitecture
from core.models.gguf_import import import_gguf
from core.runtime import ModelConfig, Shard
from tests.core.runtime.chain import logits_through

HIDDEN, FFN, HEADS, KV_HEADS, LAYERS = 256, 512, 2, 1, 4
TOL = 1e-4
_K_TYPES = {T.Q4_K: (144, (0, 2)), T.Q5_K: (176, (0, 2)), T.Q6_K: (210, (208,))}
# every tensor type the importer reads, assigned in turn to the 2-D weights
_MATRIX_TYPES = [T.Q8_0, T.Q4_K, T.Q4_0, T.Q6_K, T.Q5_0, T.Q5_K, T.Q4_1, T.F16, T.BF16, T.F32]


def _byte_vocab() -> list[str]:
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    return [*bytes_to_unicode().values(), "Ġt", "<bos>", "<eos>", "<pad>"]


def _tensor(writer: gguf.GGUFWriter, name: str, shape: tuple[int, ...], qtype: T, rng: Any) -> None:
    """A random tensor of PyTorch ``shape`` stored as ``qtype``."""
    if qtype in _K_TYPES:
        block_bytes, f16_offsets = _K_TYPES[qtype]
        n_blocks = int(np.prod(shape)) // 256
        blocks = rng.integers(0, 256, size=(n_blocks, block_bytes), dtype=np.uint8)
        for offset in f16_offsets:
            scale = (rng.standard_normal(n_blocks) * 2e-4).astype(np.float16)
            blocks[:, offset : offset + 2] = scale.view(np.uint8).reshape(n_blocks, 2)
        data = blocks.reshape(shape[0], -1)
        writer.add_tensor(name, data, raw_dtype=qtype)
        return
    values = (rng.standard_normal(shape) * 0.05).astype(np.float32)
    if qtype == T.F32:
        writer.add_tensor(name, values)
    elif qtype == T.F16:
        writer.add_tensor(name, values.astype(np.float16))
    elif qtype == T.BF16:
        raw = torch.from_numpy(values).to(torch.bfloat16).view(torch.int16).numpy()
        writer.add_tensor(name, raw.view(np.uint8), raw_dtype=qtype)
    else:
        writer.add_tensor(name, gguf.quants.quantize(values, qtype), raw_dtype=qtype)


def _norm(writer: gguf.GGUFWriter, name: str, size: int, shift: float, rng: Any) -> None:
    values = (rng.standard_normal(size) * 0.1 + shift).astype(np.float32)
    writer.add_tensor(name, values)


def _head_dim(arch: str) -> int:
    # transformers' GGUF reader takes head_dim from the file for Gemma only; elsewhere it
    # keeps its config's default (Qwen3: 128; Llama, Qwen2: hidden / heads = 128). Gemma's
    # query_pre_attn_scalar default (256) is its head_dim, as llama.cpp computes it.
    return 256 if arch.startswith("gemma") else 128


def add_byte_tokenizer(writer: gguf.GGUFWriter) -> list[str]:
    """A byte-level BPE vocabulary with bos and eos (its last three tokens are special)."""
    tokens = _byte_vocab()
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types([1] * (len(tokens) - 3) + [3, 3, 3])
    writer.add_token_merges(["Ġ t"])
    writer.add_bos_token_id(len(tokens) - 3)
    writer.add_eos_token_id(len(tokens) - 2)
    return tokens


def write_gguf(path: Path, arch: str, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    head_dim = _head_dim(arch)
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_context_length(128)
    writer.add_embedding_length(HIDDEN)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(KV_HEADS)
    writer.add_key_length(head_dim)
    writer.add_value_length(head_dim)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_rope_freq_base(10000.0)
    gemma = arch.startswith("gemma")
    if gemma:
        writer.add_sliding_window(8)  # shorter than the 40-token prompt
    if arch == "gemma2":  # transformers' GGUF reader keeps its defaults for these two
        writer.add_attn_logit_softcapping(50.0)
        writer.add_final_logit_softcapping(30.0)
    tokens = add_byte_tokenizer(writer)
    writer.add_pad_token_id(len(tokens) - 1)
    shift = 1.0 if gemma else 0.0  # llama.cpp stores Gemma's norms as 1 + w
    types = itertools.cycle(_MATRIX_TYPES)
    _tensor(writer, "token_embd.weight", (len(tokens), HIDDEN), T.F16, rng)
    _norm(writer, "output_norm.weight", HIDDEN, shift, rng)
    if arch == "llama":  # the others tie the head to the embeddings
        _tensor(writer, "output.weight", (len(tokens), HIDDEN), T.Q8_0, rng)
    q_rows, kv_rows = HEADS * head_dim, KV_HEADS * head_dim
    for i in range(LAYERS):
        b = f"blk.{i}."
        norms = ["attn_norm", "ffn_norm"]
        if gemma:
            norms += ["post_attention_norm", "post_ffw_norm"]
        for norm in norms:
            _norm(writer, b + norm + ".weight", HIDDEN, shift, rng)
        if arch in ("qwen3", "gemma3"):
            _norm(writer, b + "attn_q_norm.weight", head_dim, shift, rng)
            _norm(writer, b + "attn_k_norm.weight", head_dim, shift, rng)
        for name, rows in (("attn_q", q_rows), ("attn_k", kv_rows), ("attn_v", kv_rows)):
            _tensor(writer, b + name + ".weight", (rows, HIDDEN), next(types), rng)
            if arch == "qwen2":
                writer.add_tensor(b + name + ".bias", rng.standard_normal(rows).astype(np.float32))
        _tensor(writer, b + "attn_output.weight", (HIDDEN, q_rows), next(types), rng)
        _tensor(writer, b + "ffn_gate.weight", (FFN, HIDDEN), next(types), rng)
        _tensor(writer, b + "ffn_up.weight", (FFN, HIDDEN), next(types), rng)
        _tensor(writer, b + "ffn_down.weight", (HIDDEN, FFN), next(types), rng)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def _reference(path: Path) -> Any:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, dtype=torch.float32
    )
    return model.eval()


@pytest.mark.parametrize(
    ("arch", "family"),
    [("llama", "llama"), ("qwen2", "qwen2"), ("qwen3", "qwen3"), ("gemma2", "gemma2"),
     ("gemma3", "gemma3")],
)  # fmt: skip
def test_every_architecture_imports_equal_to_transformers(
    arch: str, family: str, tmp_path: Path
) -> None:
    path = write_gguf(tmp_path / f"{arch}.gguf", arch)
    folder = import_gguf(path, tmp_path / arch, model_id=f"tiny-{arch}", label=arch, unpack=True)
    assert ModelConfig.from_folder(folder).architecture == family
    reference = _reference(path)
    ours = load_file(str(folder / "model.safetensors"))
    theirs = reference.state_dict()
    assert set(ours) == set(theirs) - ({"lm_head.weight"} if arch != "llama" else set())
    for name, tensor in ours.items():
        assert torch.equal(tensor, theirs[name]), name
    ids = torch.randint(0, 256, (1, 40), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = reference(ids).logits
    one = logits_through([Shard.load(folder, 0, LAYERS)], ids, ids.shape[1] + 1)
    torch.testing.assert_close(one, expected, rtol=TOL, atol=TOL)
    two = logits_through(
        [Shard.load(folder, 0, 2), Shard.load(folder, 2, LAYERS)], ids, ids.shape[1] + 1
    )
    torch.testing.assert_close(two, expected, rtol=TOL, atol=TOL)


def test_an_unsupported_architecture_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "falcon.gguf"
    writer = gguf.GGUFWriter(str(path), "falcon")
    writer.add_tensor("token_embd.weight", np.zeros((4, 32), np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(UnsupportedArchitecture, match="'falcon' model; the importer reads"):
        import_gguf(path, tmp_path / "falcon", model_id="falcon")
    assert not (tmp_path / "falcon").exists()
