"""Model hyper-parameters, read from a Hugging Face ``config.json``.

One frozen dataclass for every family the runtime computes. The fields shared by
all of them are read here; what a family adds (q/k norms, sliding windows,
soft-capping, experts...) is read by its adapter in ``families/``. Anything the
runtime would compute *differently* from the reference is refused at load time
with the field and value that made us refuse: a config we silently misread would
produce plausible garbage tokens.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import ModelError, UnsupportedArchitecture
from core.runtime.families import adapter_for
from core.runtime.rope_config import rope_scaling, rope_theta, top_rope_params


@dataclass(frozen=True)
class ModelConfig:
    architecture: str  # adapter family (core/runtime/families): "llama" | "qwen2" | "gemma2" ...
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    rms_norm_eps: float
    rope_theta: float
    rope_scaling: dict[str, Any] | None  # None for plain RoPE; else has "rope_type"
    max_position_embeddings: int
    tie_word_embeddings: bool
    attention_bias: bool  # q/k/v projections carry a bias
    attention_out_bias: bool = False  # o_proj carries a bias (Llama attention_bias=True)
    # -- what some families add (defaults: the Llama arithmetic) --------------------------
    hidden_act: str = "silu"  # gated MLP activation: "silu" | "gelu_pytorch_tanh"
    qk_norm: bool = False  # RMSNorm over each q and k head before RoPE (Qwen3, Gemma 3)
    sandwich_norms: bool = False  # norms on the attention and MLP outputs too (Gemma)
    norm_offset: float = 0.0  # RMSNorm scales by (offset + w): Gemma's 1 + w, folded at load
    embed_scale: float | None = None  # embeddings times this (Gemma: sqrt(hidden))
    query_scale: float | None = None  # attention scale; None = head_dim ** -0.5
    attn_softcap: float | None = None  # scores -> cap * tanh(scores / cap) (Gemma 2)
    final_softcap: float | None = None  # same on the logits
    sliding_window: int | None = None  # a position sees itself and the window-1 before it
    sliding_layers: tuple[int, ...] = ()  # the layers that attend over the window only
    local_rope_theta: float | None = None  # sliding layers' own RoPE (Gemma 3)
    local_rope_scaling: dict[str, Any] | None = None
    num_experts: int = 0  # > 0: every layer's MLP is a mixture of experts
    experts_per_token: int = 0
    expert_intermediate_size: int = 0
    norm_topk_prob: bool = True  # renormalise the chosen experts' weights to sum to 1

    @property
    def rope_type(self) -> str:
        return "default" if self.rope_scaling is None else str(self.rope_scaling["rope_type"])

    @property
    def q_per_kv(self) -> int:
        return self.num_heads // self.num_kv_heads

    @property
    def has_local_rope(self) -> bool:
        return self.local_rope_theta is not None

    def window(self, layer: int) -> int | None:
        """The sliding window layer ``layer`` attends over, None for full attention."""
        return self.sliding_window if layer in self.sliding_layers else None

    @classmethod
    def from_folder(cls, folder: Path) -> ModelConfig:
        path = Path(folder) / "config.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ModelError(
                f"{path} does not exist; a model folder needs its config.json",
                reason="config-missing",
            ) from exc
        except (OSError, ValueError) as exc:
            raise ModelError(f"{path} cannot be read as JSON: {exc}", reason="config-bad") from exc
        if not isinstance(data, dict):
            raise ModelError(
                f"{path} holds {type(data).__name__}, expected a JSON object", reason="config-bad"
            )
        return cls.from_hf(data)

    @classmethod
    def from_hf(cls, d: Mapping[str, Any]) -> ModelConfig:
        adapter = adapter_for(d)
        try:
            hidden = int(d["hidden_size"])
            num_heads = int(d["num_attention_heads"])
            num_kv = int(d.get("num_key_value_heads") or num_heads)
            head_dim = int(d.get("head_dim") or hidden // num_heads)
            params = top_rope_params(d, per_layer_type=adapter.per_layer_rope)
            common: dict[str, Any] = dict(
                architecture=adapter.name,
                vocab_size=int(d["vocab_size"]),
                hidden_size=hidden,
                intermediate_size=int(d["intermediate_size"]),
                num_layers=int(d["num_hidden_layers"]),
                num_heads=num_heads,
                num_kv_heads=num_kv,
                head_dim=head_dim,
                rms_norm_eps=float(d.get("rms_norm_eps", 1e-6)),
                rope_theta=rope_theta(params, d),
                rope_scaling=rope_scaling(params),
                max_position_embeddings=int(d.get("max_position_embeddings", 2048)),
                tie_word_embeddings=bool(d.get("tie_word_embeddings", False)),
                attention_bias=bool(d.get("attention_bias", False)),
                hidden_act=str(d.get("hidden_act", "silu")),
            )
            cfg = cls(**{**common, **adapter.read_fields(d, common)})
        except KeyError as exc:
            raise ModelError(
                f"config.json lacks the field {exc.args[0]!r}", reason="config-bad"
            ) from exc
        except (TypeError, ValueError) as exc:
            raise ModelError(
                f"config.json has a malformed field: {exc}", reason="config-bad"
            ) from exc
        _refuse_unsupported(d, cfg, adapter.activations)
        return cfg


def _refuse_unsupported(
    d: Mapping[str, Any], cfg: ModelConfig, activations: tuple[str, ...]
) -> None:
    if cfg.hidden_act not in activations:
        raise UnsupportedArchitecture(
            f"hidden_act {cfg.hidden_act!r} is not supported for {cfg.architecture} "
            f"(only {', '.join(map(repr, activations))})"
        )
    if d.get("mlp_bias"):
        raise UnsupportedArchitecture(
            "mlp_bias=true is not supported (gated MLP without bias only)"
        )
    if cfg.num_heads % cfg.num_kv_heads:
        raise UnsupportedArchitecture(
            f"num_attention_heads {cfg.num_heads} is not a multiple of "
            f"num_key_value_heads {cfg.num_kv_heads}"
        )
    if cfg.head_dim % 2:
        raise UnsupportedArchitecture(f"head_dim {cfg.head_dim} is odd; RoPE needs it even")
    if cfg.sliding_window is not None and cfg.sliding_window < 1:
        raise ModelError(
            f"config sliding_window={cfg.sliding_window} must be positive", reason="config-bad"
        )
    for name in ("vocab_size", "hidden_size", "intermediate_size", "num_layers", "num_heads"):
        if getattr(cfg, name) <= 0:
            raise ModelError(
                f"config {name}={getattr(cfg, name)} must be positive", reason="config-bad"
            )
