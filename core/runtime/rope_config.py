"""RoPE fields of a ``config.json``, in both spellings transformers has written.

transformers 5 writes ``rope_parameters`` (theta inside; for Gemma 3 one mapping
per layer type); older configs write ``rope_theta`` + ``rope_scaling``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.errors import UnsupportedArchitecture

ROPE_TYPES = ("default", "linear", "llama3")
_LLAMA3_KEYS = ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings")


def _raw_params(d: Mapping[str, Any]) -> Mapping[str, Any] | None:
    params = d.get("rope_parameters")
    if params is None:
        params = d.get("rope_scaling")
    if params is not None and not isinstance(params, Mapping):
        raise UnsupportedArchitecture(
            f"rope parameters {params!r} are not a mapping", reason="unsupported-rope"
        )
    return params


def is_per_layer_type(params: Mapping[str, Any] | None) -> bool:
    return bool(params) and any(isinstance(v, Mapping) for v in params.values())  # type: ignore[union-attr]


def top_rope_params(d: Mapping[str, Any], *, per_layer_type: bool) -> Mapping[str, Any] | None:
    """The rope parameters of the full-attention layers."""
    params = _raw_params(d)
    if is_per_layer_type(params):
        assert params is not None
        if not per_layer_type or "full_attention" not in params:
            raise UnsupportedArchitecture(
                f"per-layer-type rope parameters ({sorted(params)}) are not supported for "
                f"model_type {d.get('model_type')!r}",
                reason="unsupported-rope",
            )
        return params["full_attention"]
    return params


def layer_type_rope_params(d: Mapping[str, Any], layer_type: str) -> Mapping[str, Any] | None:
    """One layer type's rope parameters, when the config has per-layer-type ones."""
    params = _raw_params(d)
    if not is_per_layer_type(params):
        return None
    assert params is not None
    found = params.get(layer_type)
    return found if isinstance(found, Mapping) else None


def rope_theta(params: Mapping[str, Any] | None, d: Mapping[str, Any]) -> float:
    return float((params or {}).get("rope_theta", d.get("rope_theta", 10000.0)))


def rope_scaling(params: Mapping[str, Any] | None) -> dict[str, Any] | None:
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
    scaling.pop("partial_rotary_factor", None)
    scaling["rope_type"] = rope_type
    required = ("factor",) if rope_type == "linear" else _LLAMA3_KEYS
    missing = [k for k in required if k not in scaling]
    if missing:
        raise UnsupportedArchitecture(
            f"rope_type {rope_type!r} needs {missing} in the rope parameters",
            reason="unsupported-rope",
        )
    return scaling
