"""Import a GGUF file into the on-disk form every MeshNet model has.

The result is a Hugging Face style folder (safetensors + ``config.json`` +
``tokenizer.json`` + a manifest) so the runtime, the doctor and any standard
reader load it the same way as a hub model. Quantized GGUF tensors are
dequantized to float32 with the ``gguf`` package; llama.cpp stores the q/k
projections permuted for its rotary layout, so they are permuted back.

The folder is assembled under a temporary name and renamed into place last:
an interrupted import never leaves a folder that looks complete.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import torch
from safetensors.torch import save_file

from core.errors import ModelImportError, UnsupportedArchitecture
from core.models.gguf_tokenizer import build_tokenizer_files
from core.models.manifest import ModelManifest, sha256_file
from core.progress import STAGE_IMPORT, Progress, ProgressCallback

log = logging.getLogger(__name__)

_LAYER_TENSORS = {
    "attn_norm.weight": "input_layernorm.weight",
    "ffn_norm.weight": "post_attention_layernorm.weight",
    "attn_q.weight": "self_attn.q_proj.weight",
    "attn_k.weight": "self_attn.k_proj.weight",
    "attn_v.weight": "self_attn.v_proj.weight",
    "attn_output.weight": "self_attn.o_proj.weight",
    "ffn_gate.weight": "mlp.gate_proj.weight",
    "ffn_up.weight": "mlp.up_proj.weight",
    "ffn_down.weight": "mlp.down_proj.weight",
}
_GLOBAL_TENSORS = {
    "token_embd.weight": "model.embed_tokens.weight",
    "output_norm.weight": "model.norm.weight",
    "output.weight": "lm_head.weight",
}


def _field(reader: Any, key: str, default: Any = None) -> Any:
    field = reader.fields.get(key)
    return default if field is None else field.contents()


def hf_config_from_gguf(reader: Any) -> dict[str, Any]:
    arch = _field(reader, "general.architecture")
    if arch != "llama":
        raise UnsupportedArchitecture(
            f"the GGUF file holds a {arch!r} model; the importer reads Llama-family GGUF files"
        )
    heads = int(_field(reader, "llama.attention.head_count"))
    hidden = int(_field(reader, "llama.embedding_length"))
    has_output = any(t.name == "output.weight" for t in reader.tensors)
    tokens = _field(reader, "tokenizer.ggml.tokens") or []
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": int(_field(reader, "llama.vocab_size", len(tokens))),
        "hidden_size": hidden,
        "intermediate_size": int(_field(reader, "llama.feed_forward_length")),
        "num_hidden_layers": int(_field(reader, "llama.block_count")),
        "num_attention_heads": heads,
        "num_key_value_heads": int(_field(reader, "llama.attention.head_count_kv", heads)),
        "head_dim": int(_field(reader, "llama.rope.dimension_count", hidden // heads)),
        "rms_norm_eps": float(_field(reader, "llama.attention.layer_norm_rms_epsilon", 1e-5)),
        "rope_theta": float(_field(reader, "llama.rope.freq_base", 10000.0)),
        "rope_scaling": None,
        "max_position_embeddings": int(_field(reader, "llama.context_length", 2048)),
        "tie_word_embeddings": not has_output,
        "hidden_act": "silu",
        "attention_bias": False,
        "mlp_bias": False,
        "bos_token_id": _field(reader, "tokenizer.ggml.bos_token_id"),
        "eos_token_id": _field(reader, "tokenizer.ggml.eos_token_id"),
        "pad_token_id": _field(reader, "tokenizer.ggml.padding_token_id"),
        "torch_dtype": "float32",
    }


def _unpermute_rotary(weight: np.ndarray, n_heads: int) -> np.ndarray:
    """Undo llama.cpp's q/k row permutation (interleaved halves -> HF's split halves)."""
    rows = weight.shape[0]
    return (
        weight.reshape(n_heads, rows // n_heads // 2, 2, *weight.shape[1:])
        .swapaxes(1, 2)
        .reshape(weight.shape)
    )


def _hf_name(gguf_name: str) -> str | None:
    if gguf_name in _GLOBAL_TENSORS:
        return _GLOBAL_TENSORS[gguf_name]
    if gguf_name.startswith("blk."):
        _, index, rest = gguf_name.split(".", 2)
        if rest in _LAYER_TENSORS:
            return f"model.layers.{int(index)}.{_LAYER_TENSORS[rest]}"
    return None


def gguf_tensor_shapes(gguf_path: Path) -> tuple[dict[str, Any], dict[str, list[int]]]:
    """(HF config, HF tensor name -> shape) from a GGUF's header and tensor table.

    Only the table is read (the file is memory-mapped, no weight is decoded), so
    the wizard can size layer ranges before the model is imported.
    """
    import gguf

    try:
        reader = gguf.GGUFReader(str(gguf_path))
    except (OSError, ValueError) as exc:
        raise ModelImportError(f"cannot read the GGUF file {gguf_path}: {exc}") from exc
    config = hf_config_from_gguf(reader)
    shapes: dict[str, list[int]] = {}
    for tensor in reader.tensors:
        name = _hf_name(tensor.name)
        if name is not None:
            shapes[name] = [int(d) for d in reversed(tensor.shape)]
    return config, shapes


def dequantized_tensors(
    reader: Any, config: dict[str, Any], progress: ProgressCallback | None = None
) -> dict[str, torch.Tensor]:
    import gguf

    tensors: dict[str, torch.Tensor] = {}
    count = len(reader.tensors)
    for done, tensor in enumerate(reader.tensors):
        if progress is not None:
            progress(Progress(STAGE_IMPORT, 1 + done, count + 3, "Unpacking the default model…"))
        name = _hf_name(tensor.name)
        if name is None:
            raise ModelImportError(f"the GGUF tensor {tensor.name!r} has no Llama counterpart")
        shape = tuple(int(d) for d in reversed(tensor.shape))
        values = gguf.quants.dequantize(tensor.data, tensor.tensor_type)
        array = np.asarray(values, dtype=np.float32).reshape(shape)
        if name.endswith("q_proj.weight"):
            array = _unpermute_rotary(array, config["num_attention_heads"])
        elif name.endswith("k_proj.weight"):
            array = _unpermute_rotary(array, config["num_key_value_heads"])
        tensors[name] = torch.from_numpy(np.array(array, dtype=np.float32, order="C"))
    return tensors


def import_gguf(
    gguf_path: Path,
    destination: Path,
    *,
    model_id: str,
    progress: ProgressCallback | None = None,
) -> Path:
    """Convert ``gguf_path`` into ``destination``; a complete folder is left as it is.

    Progress (stage "import"): one unit for hashing, one per tensor, one for
    writing, one for the digests.
    """
    import gguf

    destination = Path(destination)
    if (destination / "meshnet-manifest.json").is_file():
        return destination

    def report(done: int, total: int, message: str) -> None:
        if progress is not None:
            progress(Progress(STAGE_IMPORT, done, total, message))

    _remove_abandoned_staging(destination)
    staging = destination.with_name(f".{destination.name}.partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        report(0, 0, "Checking the packaged model…")
        gguf_digest = sha256_file(gguf_path)
        reader = gguf.GGUFReader(str(gguf_path))
        config = hf_config_from_gguf(reader)
        total = len(reader.tensors) + 3
        report(1, total, "Unpacking the default model…")
        tensors = dequantized_tensors(reader, config, progress)
        report(total - 2, total, "Writing the model files…")
        save_file(tensors, str(staging / "model.safetensors"), metadata={"format": "pt"})
        del tensors
        (staging / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        generation = {key: config[key] for key in ("bos_token_id", "eos_token_id", "pad_token_id")}
        (staging / "generation_config.json").write_text(json.dumps(generation, indent=2) + "\n")
        build_tokenizer_files(reader, staging)
        report(total - 1, total, "Recording the model's digests…")
        manifest = ModelManifest.build(
            staging,
            model_id=model_id,
            revision=f"gguf-sha256-{gguf_digest}",
            architecture=config["architectures"][0],
            layer_count=config["num_hidden_layers"],
            source={"kind": "gguf", "file": Path(gguf_path).name, "sha256": gguf_digest},
        )
        manifest.write(staging)
        if destination.exists():
            shutil.rmtree(destination)
        os.replace(staging, destination)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    report(total, total, "The default model is ready.")
    log.info("imported model", extra={"model_id": model_id, "folder": str(destination)})
    return destination


def _remove_abandoned_staging(destination: Path) -> None:
    """Staging folders of imports that were killed outright (their process is gone)."""
    for staging in destination.parent.glob(f".{destination.name}.partial-*"):
        pid_text = staging.name.rsplit("-", 1)[-1]
        if pid_text.isdigit() and int(pid_text) != os.getpid() and psutil.pid_exists(int(pid_text)):
            continue  # another import is running right now
        log.info("removing an abandoned import folder", extra={"folder": str(staging)})
        shutil.rmtree(staging, ignore_errors=True)
