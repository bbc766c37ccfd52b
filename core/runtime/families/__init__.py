"""Architecture adapters: which Hugging Face configs the runtime computes, and how.

An adapter names a family (the recipe catalogue's ``architecture``), reads the
config fields only that family has into ``ModelConfig`` (refusing values it
would compute differently from the reference) and says where the family's
checkpoint keeps each tensor (``TensorLayout``). The modules themselves are
shared (``layers.py``): a family is a set of switches on them. The adapter also
declares the GGUF files the family imports from (``GgufArchitecture``: llama.cpp's
architecture name, tensor map, field reader) and its tokenizer quirks; the
importer's and tokenizer's tables are derived from ``ADAPTERS``, and each recipe
catalogue entry's ``architecture`` is an adapter's name. Adding a family touches
its module here, ``ADAPTERS``, its catalogue entries, the conformance test and
the model table in docs/models.md (tests/core/runtime/test_family_registry.py ties them).

    llama   Llama 2/3/3.2, SmolLM, Mistral (sliding window)   families/llama.py
    qwen2   Qwen2 (q/k/v bias)                                  families/llama.py
    qwen3   Qwen3 (q/k RMSNorm per head)                        families/qwen3.py
    phi3    Phi-3 (fused qkv and gate_up in the checkpoint)     families/phi3.py
    gemma2  Gemma 2, gemma3: Gemma 3 text                       families/gemma.py
    mixtral Mixtral, qwen3_moe: Qwen3-MoE (top-k experts)       families/moe.py
    (GGUF)  tensor maps, GgufMeta, GgufArchitecture             families/gguf.py
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.errors import UnsupportedArchitecture
from core.runtime.families.base import FamilyAdapter, TensorLayout
from core.runtime.families.gemma import GEMMA2, GEMMA3
from core.runtime.families.llama import LLAMA, QWEN2
from core.runtime.families.moe import MIXTRAL, QWEN3_MOE
from core.runtime.families.phi3 import PHI3
from core.runtime.families.qwen3 import QWEN3

__all__ = [
    "ADAPTERS",
    "GGUF_FAMILIES",
    "FamilyAdapter",
    "TensorLayout",
    "adapter_for",
    "adapter_named",
]

ADAPTERS: tuple[FamilyAdapter, ...] = (
    LLAMA,
    QWEN2,
    QWEN3,
    PHI3,
    GEMMA2,
    GEMMA3,
    MIXTRAL,
    QWEN3_MOE,
)
_BY_MODEL_TYPE = {t: a for a in ADAPTERS for t in a.model_types}
_BY_CLASS = {c: a for a in ADAPTERS for c in a.arch_classes}
_BY_NAME = {a.name: a for a in ADAPTERS}
# general.architecture -> the adapter that reads such GGUF files (core.runtime.gguf_arch)
GGUF_FAMILIES: dict[str, FamilyAdapter] = {a.gguf.name: a for a in ADAPTERS if a.gguf is not None}


def adapter_for(d: Mapping[str, Any]) -> FamilyAdapter:
    """The adapter of a config.json: by model_type, else by its architectures list."""
    model_type = d.get("model_type")
    if isinstance(model_type, str) and model_type in _BY_MODEL_TYPE:
        return _BY_MODEL_TYPE[model_type]
    for arch in d.get("architectures") or ():
        if arch in _BY_CLASS:
            return _BY_CLASS[arch]
    raise UnsupportedArchitecture(
        f"model_type {model_type!r} (architectures {d.get('architectures')}) is not supported; "
        f"this runtime computes {sorted(_BY_MODEL_TYPE)} models"
    )


def adapter_named(name: str) -> FamilyAdapter:
    """The adapter of ``ModelConfig.architecture``."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise UnsupportedArchitecture(
            f"architecture {name!r} has no adapter; known: {sorted(_BY_NAME)}"
        ) from None
