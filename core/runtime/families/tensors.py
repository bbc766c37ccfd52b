"""A layer's Hugging Face tensor names, and the state dict of our modules made from them.

Our modules fuse q|k|v and gate|up (see ``layers.py``); a checkpoint keeps them
apart (Llama, Gemma, Qwen) or already fused (Phi-3). Gemma's (1 + w) norms are
folded here, in float32 before the cast, so the module computes x * w' exactly
as the reference computes x * (1 + w).
"""

from __future__ import annotations

import torch

from core.runtime.config import ModelConfig
from core.runtime.families.base import TensorLayout

# HF norm name -> our module name. Gemma's post_attention_layernorm normalises the
# attention *output*; its pre_feedforward_layernorm is what Llama calls post-attention.
_LLAMA_NORMS = {"input_layernorm": "input_norm", "post_attention_layernorm": "post_attention_norm"}
_SANDWICH_NORMS = {
    "input_layernorm": "input_norm",
    "post_attention_layernorm": "attn_out_norm",
    "pre_feedforward_layernorm": "post_attention_norm",
    "post_feedforward_layernorm": "mlp_out_norm",
}


def _norms(cfg: ModelConfig) -> dict[str, str]:
    return _SANDWICH_NORMS if cfg.sandwich_norms else _LLAMA_NORMS


def _expert_names(p: str, e: int, layout: TensorLayout) -> tuple[str, str, str]:
    """(gate, up, down) of expert e."""
    if layout.moe == "mixtral":
        q = f"{p}block_sparse_moe.experts.{e}."
        return q + "w1.weight", q + "w3.weight", q + "w2.weight"
    q = f"{p}mlp.experts.{e}."
    return q + "gate_proj.weight", q + "up_proj.weight", q + "down_proj.weight"


def _router_name(p: str, layout: TensorLayout) -> str:
    return p + ("block_sparse_moe.gate.weight" if layout.moe == "mixtral" else "mlp.gate.weight")


def layer_tensor_names(i: int, cfg: ModelConfig, layout: TensorLayout) -> list[str]:
    p = f"model.layers.{i}."
    attn = p + "self_attn."
    names = [p + hf + ".weight" for hf in _norms(cfg)]
    if layout.fused_qkv:
        names.append(attn + "qkv_proj.weight")
    else:
        names += [attn + f"{x}_proj.weight" for x in "qkv"]
    names.append(attn + "o_proj.weight")
    if cfg.attention_bias:
        names += (
            [attn + "qkv_proj.bias"]
            if layout.fused_qkv
            else [attn + f"{x}_proj.bias" for x in "qkv"]
        )
    if cfg.attention_out_bias:
        names.append(attn + "o_proj.bias")
    if cfg.qk_norm:
        names += [attn + "q_norm.weight", attn + "k_norm.weight"]
    if layout.moe is not None:
        names.append(_router_name(p, layout))
        for e in range(cfg.num_experts):
            names += _expert_names(p, e, layout)
    elif layout.fused_gate_up:
        names += [p + "mlp.gate_up_proj.weight", p + "mlp.down_proj.weight"]
    else:
        names += [p + f"mlp.{x}_proj.weight" for x in ("gate", "up", "down")]
    return names


def norm_weight(w: torch.Tensor, cfg: ModelConfig, dtype: torch.dtype) -> torch.Tensor:
    if cfg.norm_offset:
        w = w.float() + cfg.norm_offset
    return w.to(dtype)


def layer_state(
    i: int,
    local: int,
    t: dict[str, torch.Tensor],
    cfg: ModelConfig,
    layout: TensorLayout,
    dtype: torch.dtype,
) -> dict[str, torch.Tensor]:
    """HF tensors of layer i -> our module names for local layer ``local``."""
    p, m = f"model.layers.{i}.", f"layers.{local}."
    attn = p + "self_attn."
    state: dict[str, torch.Tensor] = {}
    for hf, ours in _norms(cfg).items():
        state[m + ours + ".weight"] = norm_weight(t[p + hf + ".weight"], cfg, dtype)
    if cfg.qk_norm:
        for x in "qk":
            state[m + f"attn.{x}_norm.weight"] = norm_weight(
                t[attn + f"{x}_norm.weight"], cfg, dtype
            )
    if layout.fused_qkv:
        state[m + "attn.qkv.weight"] = t[attn + "qkv_proj.weight"]
        if cfg.attention_bias:
            state[m + "attn.qkv.bias"] = t[attn + "qkv_proj.bias"]
    else:
        state[m + "attn.qkv.weight"] = torch.cat([t[attn + f"{x}_proj.weight"] for x in "qkv"])
        if cfg.attention_bias:
            state[m + "attn.qkv.bias"] = torch.cat([t[attn + f"{x}_proj.bias"] for x in "qkv"])
    state[m + "attn.o_proj.weight"] = t[attn + "o_proj.weight"]
    if cfg.attention_out_bias:
        state[m + "attn.o_proj.bias"] = t[attn + "o_proj.bias"]
    if layout.moe is not None:
        state[m + "mlp.router.weight"] = t[_router_name(p, layout)]
        for e in range(cfg.num_experts):
            gate, up, down = _expert_names(p, e, layout)
            state[m + f"mlp.experts.{e}.gate_up.weight"] = torch.cat([t[gate], t[up]])
            state[m + f"mlp.experts.{e}.down.weight"] = t[down]
    elif layout.fused_gate_up:
        state[m + "mlp.gate_up.weight"] = t[p + "mlp.gate_up_proj.weight"]
        state[m + "mlp.down.weight"] = t[p + "mlp.down_proj.weight"]
    else:
        state[m + "mlp.gate_up.weight"] = torch.cat(
            [t[p + "mlp.gate_proj.weight"], t[p + "mlp.up_proj.weight"]]
        )
        state[m + "mlp.down.weight"] = t[p + "mlp.down_proj.weight"]
    return {k: v.to(dtype) for k, v in state.items()}
