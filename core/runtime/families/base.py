"""What an architecture adapter is: a name, the configs it claims, a field reader,
the checkpoint's tensor layout, the GGUF files it reads and its tokenizer quirks.

The adapter is the one place a family is declared: ``ADAPTERS`` lists them and
every other table (the GGUF importer's architectures, the GGUF tokenizer's Gemma
vocabulary) is derived from it; the recipe catalogue's ``architecture`` names one
(tests/core/runtime/test_family_registry.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.errors import UnsupportedArchitecture
from core.runtime.families.gguf import GgufArchitecture

FieldReader = Callable[[Mapping[str, Any], Mapping[str, Any]], dict[str, Any]]
SLIDING, FULL = "sliding_attention", "full_attention"


@dataclass(frozen=True)
class TensorLayout:
    """Where a layer's tensors sit in the Hugging Face checkpoint."""

    fused_qkv: bool = False  # self_attn.qkv_proj holds q|k|v (Phi-3)
    fused_gate_up: bool = False  # mlp.gate_up_proj holds gate|up (Phi-3)
    moe: str | None = None  # "mixtral" (block_sparse_moe.experts.E.w1/w3/w2) | "qwen" (mlp.experts)


@dataclass(frozen=True)
class FamilyAdapter:
    name: str  # ModelConfig.architecture and the recipe catalogue's "architecture"
    model_types: tuple[str, ...]
    arch_classes: tuple[str, ...]
    read_fields: FieldReader  # (config.json, common fields) -> the family's own fields
    layout: TensorLayout = field(default_factory=TensorLayout)
    activations: tuple[str, ...] = ("silu",)
    per_layer_rope: bool = False  # rope_parameters may hold one mapping per layer type
    gguf: GgufArchitecture | None = None  # the llama.cpp architecture it imports, if any
    # Gemma's vocabulary: a GGUF 'llama'-type tokenizer is Gemma's SentencePiece, a file
    # without a chat template chats as Gemma does, and <end_of_turn> is a second stop
    gemma_vocabulary: bool = False


def refuse(field_name: str, value: Any, why: str, reason: str = "unsupported-architecture") -> None:
    raise UnsupportedArchitecture(f"{field_name}={value!r} is not supported: {why}", reason=reason)


def sliding_layers_of(layer_types: Sequence[Any], num_layers: int) -> tuple[int, ...]:
    """Indices of the sliding-window layers in a ``layer_types`` list."""
    if len(layer_types) != num_layers:
        refuse("layer_types", list(layer_types), f"it must list all {num_layers} layers")
    for kind in layer_types:
        if kind not in (SLIDING, FULL):
            refuse("layer_types", kind, f"only {SLIDING!r} and {FULL!r} layers are computed")
    return tuple(i for i, kind in enumerate(layer_types) if kind == SLIDING)


def window_everywhere(d: Mapping[str, Any], common: Mapping[str, Any]) -> dict[str, Any]:
    """Mistral, Mixtral, Phi-3: when sliding_window is set, every layer slides."""
    window = d.get("sliding_window")
    if window is None:
        return {}
    return {"sliding_window": int(window), "sliding_layers": tuple(range(common["num_layers"]))}
