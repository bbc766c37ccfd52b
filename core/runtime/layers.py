"""The Llama-family block, written for decoding with a preallocated KV cache.

Small modules in the nanoGPT/litgpt manner. Two liberties against the Hugging
Face layout, both loaded from HF tensor names by ``weights.py``:

* q/k/v are one fused projection and gate/up another (fewer kernel launches per
  decode step, which dominate at batch 1 on a CPU);
* grouped-query attention folds the query heads of one kv head into the query
  length axis, so SDPA reads each cached key/value once instead of a repeated
  copy of the whole prefix per step.

Shapes: B batch, T new positions, S cached positions incl. the new ones,
H hidden, nh query heads, nkv kv heads, g = nh // nkv, hd head dim.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from core.runtime.config import ModelConfig


class RMSNorm(nn.Module):
    def __init__(self, size: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype == torch.float32:
            return F.rms_norm(x, self.weight.shape, self.weight, self.eps)
        # half precision: normalise in float32, scale after casting back (as the reference)
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * xf.to(x.dtype)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin_signed: torch.Tensor) -> torch.Tensor:
    """x * cos + rotate_half(x) * sin, with rotate_half's sign folded into the table.

    x: (B, T, heads, hd); cos, sin_signed: (T, 1, hd).
    """
    half = x.shape[-1] // 2
    swapped = torch.cat((x.narrow(-1, half, half), x.narrow(-1, 0, half)), dim=-1)
    return torch.addcmul(x * cos, swapped, sin_signed)


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.n_head, self.n_kv, self.hd = cfg.num_heads, cfg.num_kv_heads, cfg.head_dim
        self.group = cfg.q_per_kv
        qkv_out = (self.n_head + 2 * self.n_kv) * self.hd
        self.qkv = nn.Linear(cfg.hidden_size, qkv_out, bias=cfg.attention_bias)
        self.o_proj = nn.Linear(self.n_head * self.hd, cfg.hidden_size, bias=cfg.attention_out_bias)

    def forward(
        self,
        x: torch.Tensor,  # (B, T, H)
        cos: torch.Tensor,  # (T, 1, hd)
        sin: torch.Tensor,  # (T, 1, hd), sign-folded
        k_cache: torch.Tensor,  # (B, nkv, max_len, hd)
        v_cache: torch.Tensor,  # (B, nkv, max_len, hd)
        pos: int,
        mask: torch.Tensor | None,  # (T*g, S) bool, None when T == 1
    ) -> torch.Tensor:
        B, T, _ = x.shape
        nh, nkv, hd, g = self.n_head, self.n_kv, self.hd, self.group
        qkv = self.qkv(x).view(B, T, nh + 2 * nkv, hd)
        qk = apply_rope(qkv.narrow(2, 0, nh + nkv), cos, sin)  # (B, T, nh + nkv, hd)
        # write the new positions into the preallocated cache, in place
        k_cache.narrow(2, pos, T).copy_(qk.narrow(2, nh, nkv).transpose(1, 2))  # (B, nkv, T, hd)
        v_cache.narrow(2, pos, T).copy_(qkv.narrow(2, nh + nkv, nkv).transpose(1, 2))
        # query heads of one kv head side by side on the length axis: (B, nkv, T*g, hd)
        q = qk.narrow(2, 0, nh)
        if T == 1:
            q = q.view(B, nkv, g, hd)
        else:
            q = q.reshape(B, T, nkv, g, hd).permute(0, 2, 1, 3, 4).reshape(B, nkv, T * g, hd)
        if q.dtype != k_cache.dtype:
            q = q.to(k_cache.dtype)
        end = pos + T
        y = F.scaled_dot_product_attention(
            q, k_cache.narrow(2, 0, end), v_cache.narrow(2, 0, end), attn_mask=mask
        )  # (B, nkv, T*g, hd) in kv dtype
        if T == 1:
            y = y.view(B, 1, nh * hd)
        else:
            y = y.view(B, nkv, T, g, hd).permute(0, 2, 1, 3, 4).reshape(B, T, nh * hd)
        if y.dtype != x.dtype:
            y = y.to(x.dtype)
        return self.o_proj(y)  # (B, T, H)


class MLP(nn.Module):
    """SwiGLU: down(silu(gate(x)) * up(x)), gate and up fused."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.gate_up = nn.Linear(cfg.hidden_size, 2 * cfg.intermediate_size, bias=False)
        self.down = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up(x).chunk(2, dim=-1)  # (B, T, I) each
        return self.down(F.silu(gate).mul_(up))  # (B, T, H)


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.input_norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.attn = Attention(cfg)
        self.post_attention_norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = MLP(cfg)

    def forward(
        self,
        x: torch.Tensor,
        cos: torch.Tensor,
        sin: torch.Tensor,
        k_cache: torch.Tensor,
        v_cache: torch.Tensor,
        pos: int,
        mask: torch.Tensor | None,
    ) -> torch.Tensor:
        h = x + self.attn(self.input_norm(x), cos, sin, k_cache, v_cache, pos, mask)
        return h.add_(self.mlp(self.post_attention_norm(h)))  # (B, T, H); h is ours to reuse


def causal_group_mask(T: int, pos: int, group: int, device: torch.device) -> torch.Tensor | None:
    """Row t*g+j (new position pos+t, query head j of its group) sees keys [0, pos+t]."""
    if T == 1:
        return None  # one new position sees the whole cache
    rows = torch.arange(T, device=device).repeat_interleave(group) + pos  # (T*g,)
    keys = torch.arange(pos + T, device=device)  # (S,)
    return keys[None, :] <= rows[:, None]  # (T*g, S)
