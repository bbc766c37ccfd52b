"""Loading: a shard reads only its own tensors; configs we cannot compute are refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from core.errors import ConfigError, ModelError, RangeError, UnsupportedArchitecture
from core.runtime import ModelConfig, Shard, parse_dtype

LAYER_TENSORS = 9  # 2 norms + q k v o + gate up down
LAYER_BYTES = 4 * (2 * 64 + 2 * 64 * 64 + 2 * 32 * 64 + 3 * 64 * 128)  # fp32: norms, qo, kv, mlp


def test_middle_shard_of_a_multifile_folder_loads_only_its_layers(tiny_multifile: Path) -> None:
    weight_map = json.loads((tiny_multifile / "model.safetensors.index.json").read_text())
    shard = Shard.load(tiny_multifile, 1, 3)
    assert {n.split(".")[2] for n in shard.tensor_names} == {"1", "2"}
    assert len(shard.tensor_names) == 2 * LAYER_TENSORS
    assert shard.weight_bytes() == 2 * LAYER_BYTES
    assert set(shard.files_opened) == {weight_map["weight_map"][n] for n in shard.tensor_names}
    assert len(set(weight_map["weight_map"].values())) > len(shard.files_opened)
    assert shard.embed is None and shard.lm_head is None


def test_end_shards_add_embedding_and_head(tiny_multifile: Path) -> None:
    first, last = Shard.load(tiny_multifile, 0, 1), Shard.load(tiny_multifile, 3, 4)
    assert "model.embed_tokens.weight" in first.tensor_names
    assert first.weight_bytes() == LAYER_BYTES + 256 * 64 * 4
    assert {"model.norm.weight", "lm_head.weight"} <= set(last.tensor_names)
    assert "model.embed_tokens.weight" not in last.tensor_names
    assert last.weight_bytes() == LAYER_BYTES + 64 * 4 + 256 * 64 * 4


def test_tied_last_shard_uses_the_embedding_as_lm_head(tiny_llama: Path) -> None:
    last = Shard.load(tiny_llama, 2, 4)
    assert "lm_head.weight" not in last.tensor_names
    assert "model.embed_tokens.weight" in last.tensor_names
    whole = Shard.load(tiny_llama, 0, 4)
    assert whole.lm_head is not None and whole.embed is not None
    assert whole.lm_head.weight is whole.embed.weight  # one tensor, counted once
    assert whole.weight_bytes() == 4 * LAYER_BYTES + 64 * 4 + 256 * 64 * 4


@pytest.mark.parametrize(("start", "end"), [(-1, 2), (2, 2), (3, 5), (0, 9)])
def test_range_outside_the_model_is_refused_with_numbers(
    tiny_llama: Path, start: int, end: int
) -> None:
    with pytest.raises(RangeError, match=rf"\[{start}, {end}\) are outside the model's \[0, 4\)"):
        Shard.load(tiny_llama, start, end)


def test_bad_dtype_and_device_names_are_refused() -> None:
    assert parse_dtype("bfloat16") is torch.bfloat16
    with pytest.raises(ConfigError, match="'int8' is not supported"):
        parse_dtype("int8")


def test_missing_tensor_file_is_a_model_error(tmp_path: Path, tiny_llama: Path) -> None:
    (tmp_path / "config.json").write_text((tiny_llama / "config.json").read_text())
    with pytest.raises(ModelError, match=r"no \*\.safetensors"):
        Shard.load(tmp_path, 0, 2)


BASE: dict[str, Any] = {
    "model_type": "llama",
    "vocab_size": 256,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 512,
}


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"]}, "'gpt2'"),
        ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0}}, "rope_type 'yarn'"),
        ({"rope_parameters": {"rope_type": "dynamic", "rope_theta": 1e4}}, "rope_type 'dynamic'"),
        ({"sliding_window": 128}, "sliding_window=128 is not supported: it is active"),
        (
            {"model_type": "qwen2", "use_sliding_window": True, "sliding_window": 64},
            "sliding_window=64",
        ),
        ({"hidden_act": "gelu"}, "hidden_act 'gelu'"),
        ({"rope_parameters": {"full_attention": {"rope_type": "default"}}}, "per-layer-type"),
        ({"model_type": "gemma3_text", "use_bidirectional_attention": True}, "bidirectional"),
        ({"model_type": "gemma2", "hidden_activation": "gelu"}, "hidden_act 'gelu'"),
        (
            {"model_type": "gemma2", "sliding_window": 8, "layer_types": ["chunked"] * 4},
            "layer_types='chunked'",
        ),
        (
            {
                "model_type": "qwen3_moe",
                "num_experts": 4,
                "num_experts_per_tok": 2,
                "moe_intermediate_size": 32,
                "mlp_only_layers": [1],
            },
            "mlp_only_layers",
        ),
        (
            {"model_type": "mixtral", "num_local_experts": 2, "num_experts_per_tok": 3},
            "num_experts_per_tok=3",
        ),
        ({"model_type": "phi3", "rope_parameters": {"rope_type": "longrope"}}, "'longrope'"),
        (
            {"model_type": "phi3", "rope_parameters": {"partial_rotary_factor": 0.75}},
            "partial_rotary_factor",
        ),
        ({"num_key_value_heads": 3}, "not a multiple of num_key_value_heads 3"),
    ],
)
def test_configs_the_adapter_cannot_compute_are_refused(change: dict[str, Any], words: str) -> None:
    with pytest.raises(UnsupportedArchitecture, match=words):
        ModelConfig.from_hf({**BASE, **change})


def test_config_variants_are_read_from_both_rope_spellings() -> None:
    old = ModelConfig.from_hf(
        {**BASE, "rope_theta": 5e5, "rope_scaling": {"type": "linear", "factor": 2.0}}
    )
    new = ModelConfig.from_hf(
        {**BASE, "rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": 5e5}}
    )
    assert old == new and old.rope_type == "linear" and old.rope_theta == 5e5
    inactive = ModelConfig.from_hf({**BASE, "model_type": "mistral", "sliding_window": None})
    assert inactive.architecture == "llama"
    qwen = ModelConfig.from_hf(
        {**BASE, "model_type": "qwen2", "sliding_window": 64, "use_sliding_window": False}
    )
    assert qwen.attention_bias and not qwen.attention_out_bias
