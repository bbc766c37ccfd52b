"""Model hyper-parameters, read from a Hugging Face ``config.json``.

One frozen dataclass for the whole Llama family the adapter computes: Llama 2/3
(incl. "llama3" RoPE scaling), SmolLM, Mistral without sliding window and Qwen2
(q/k/v bias). Anything the adapter would compute *differently* from the
reference is refused here, at load time, with the field and value that made us
refuse: a config we silently misread would produce plausible garbage tokens.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import ModelError, UnsupportedArchitecture

# model_type -> adapter family
_FAMILIES = {"llama": "llama", "mistral": "llama", "qwen2": "qwen2"}
_ARCH_CLASSES = {
    "LlamaForCausalLM": "llama",
    "MistralForCausalLM": "llama",
    "Qwen2ForCausalLM": "qwen2",
}
ROPE_TYPES = ("default", "linear", "llama3")
_LLAMA3_KEYS = ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings")


@dataclass(frozen=True)
class ModelConfig:
    architecture: str  # adapter family: "llama" | "qwen2"
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

    @property
    def rope_type(self) -> str:
        return "default" if self.rope_scaling is None else str(self.rope_scaling["rope_type"])

    @property
    def q_per_kv(self) -> int:
        return self.num_heads // self.num_kv_heads

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
        family = _family(d)
        try:
            hidden = int(d["hidden_size"])
            num_heads = int(d["num_attention_heads"])
            num_kv = int(d.get("num_key_value_heads") or num_heads)
            head_dim = int(d.get("head_dim") or hidden // num_heads)
            cfg = cls(
                architecture=family,
                vocab_size=int(d["vocab_size"]),
                hidden_size=hidden,
                intermediate_size=int(d["intermediate_size"]),
                num_layers=int(d["num_hidden_layers"]),
                num_heads=num_heads,
                num_kv_heads=num_kv,
                head_dim=head_dim,
                rms_norm_eps=float(d.get("rms_norm_eps", 1e-6)),
                rope_theta=_rope_theta(d),
                rope_scaling=_rope_scaling(d),
                max_position_embeddings=int(d.get("max_position_embeddings", 2048)),
                tie_word_embeddings=bool(d.get("tie_word_embeddings", False)),
                attention_bias=family == "qwen2" or bool(d.get("attention_bias", False)),
                attention_out_bias=family == "llama" and bool(d.get("attention_bias", False)),
            )
        except KeyError as exc:
            raise ModelError(
                f"config.json lacks the field {exc.args[0]!r}", reason="config-bad"
            ) from exc
        except (TypeError, ValueError) as exc:
            raise ModelError(
                f"config.json has a malformed field: {exc}", reason="config-bad"
            ) from exc
        _refuse_unsupported(d, cfg)
        return cfg


def _family(d: Mapping[str, Any]) -> str:
    model_type = d.get("model_type")
    if isinstance(model_type, str) and model_type in _FAMILIES:
        return _FAMILIES[model_type]
    for arch in d.get("architectures") or ():
        if arch in _ARCH_CLASSES:
            return _ARCH_CLASSES[arch]
    raise UnsupportedArchitecture(
        f"model_type {model_type!r} (architectures {d.get('architectures')}) is not supported; "
        f"this runtime computes {sorted(_FAMILIES)} models"
    )


def _rope_params(d: Mapping[str, Any]) -> Mapping[str, Any] | None:
    # transformers 5 writes "rope_parameters" (theta inside); older configs write
    # "rope_theta" + "rope_scaling". Accept both.
    params = d.get("rope_parameters")
    if params is None:
        params = d.get("rope_scaling")
    if params is not None and not isinstance(params, Mapping):
        raise UnsupportedArchitecture(
            f"rope parameters {params!r} are not a mapping", reason="unsupported-rope"
        )
    if params and any(isinstance(v, Mapping) for v in params.values()):
        raise UnsupportedArchitecture(
            f"per-layer-type rope parameters ({sorted(params)}) are not supported",
            reason="unsupported-rope",
        )
    return params


def _rope_theta(d: Mapping[str, Any]) -> float:
    params = _rope_params(d) or {}
    return float(params.get("rope_theta", d.get("rope_theta", 10000.0)))


def _rope_scaling(d: Mapping[str, Any]) -> dict[str, Any] | None:
    params = _rope_params(d)
    if not params:
        return None
    rope_type = params.get("rope_type", params.get("type", "default"))
    if rope_type not in ROPE_TYPES:
        raise UnsupportedArchitecture(
            f"rope_type {rope_type!r} is not supported; supported: {list(ROPE_TYPES)}",
            reason="unsupported-rope",
        )
    if float(params.get("partial_rotary_factor", 1.0)) != 1.0:
        raise UnsupportedArchitecture(
            f"partial_rotary_factor {params['partial_rotary_factor']} is not supported (only 1.0)",
            reason="unsupported-rope",
        )
    if rope_type == "default":
        return None
    scaling = {k: v for k, v in params.items() if k not in ("rope_theta", "type")}
    scaling["rope_type"] = rope_type
    required = ("factor",) if rope_type == "linear" else _LLAMA3_KEYS
    missing = [k for k in required if k not in scaling]
    if missing:
        raise UnsupportedArchitecture(
            f"rope_type {rope_type!r} needs {missing} in the rope parameters",
            reason="unsupported-rope",
        )
    return scaling


def _refuse_unsupported(d: Mapping[str, Any], cfg: ModelConfig) -> None:
    act = d.get("hidden_act", "silu")
    if act != "silu":
        raise UnsupportedArchitecture(f"hidden_act {act!r} is not supported (only 'silu')")
    if d.get("mlp_bias"):
        raise UnsupportedArchitecture("mlp_bias=true is not supported (SwiGLU without bias only)")
    window = d.get("sliding_window")
    use_window = d.get("use_sliding_window", cfg.architecture != "qwen2")
    if window is not None and use_window and int(window) < cfg.max_position_embeddings:
        raise UnsupportedArchitecture(
            f"sliding_window={window} is active (max_position_embeddings "
            f"{cfg.max_position_embeddings}); this runtime computes full attention only",
            reason="unsupported-sliding-window",
        )
    if cfg.num_heads % cfg.num_kv_heads:
        raise UnsupportedArchitecture(
            f"num_attention_heads {cfg.num_heads} is not a multiple of "
            f"num_key_value_heads {cfg.num_kv_heads}"
        )
    if cfg.head_dim % 2:
        raise UnsupportedArchitecture(f"head_dim {cfg.head_dim} is odd; RoPE needs it even")
    for name in ("vocab_size", "hidden_size", "intermediate_size", "num_layers", "num_heads"):
        if getattr(cfg, name) <= 0:
            raise ModelError(
                f"config {name}={getattr(cfg, name)} must be positive", reason="config-bad"
            )
