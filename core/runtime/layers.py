"""The Llama-family block, written for decoding with a preallocated KV cache.

Small modules in the nanoGPT/litgpt manner. At batch 1 on a CPU a decode step
is the weight reads plus a few thousand tiny kernel launches, so the hot path
keeps launches few; every liberty taken against the Hugging Face layout is
loaded from HF tensor names by ``shard.py`` and proven equal by the tests:

* q/k/v are one fused projection and gate/up another;
* hidden states travel as 2-D (B*T, H) matrices, so a projection is one
  ``mm`` instead of ``linear``'s reshapes around it;
* RoPE runs once over all q/k/v heads (v's table rows are cos=1, sin=0), so the
  new keys and values reach the cache with a single copy: a layer's cache is
  one (B, 2*nkv, max_len, hd) tensor, keys in the first nkv heads;
* grouped-query attention folds the query heads of one kv head into the query
  length axis, so SDPA reads each cached key/value once instead of a repeated
  copy of the whole prefix per step.

The families' switches (``families/``) act here: q/k norms, a sliding window
(a decode step narrows the keys, a prefill masks them), soft-capped scores
(computed outside SDPA), GeGLU, and Gemma's norms around attention and MLP
outputs; the mixture-of-experts MLP is ``MoE``.

Shapes: B batch, T new positions, N = B*T, S cached positions incl. the new
ones, H hidden, nh query heads, nkv kv heads, g = nh // nkv, hd head dim,
nt = nh + 2*nkv.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from core.runtime.config import ModelConfig
from core.runtime.quant import Int8Linear
from core.runtime.quant4 import Int4Linear, Int8Rows


class LayerCache(NamedTuple):
    """One layer's preallocated cache and its key / value halves (views)."""

    kv: torch.Tensor  # (B, 2 nkv, max_len, hd)
    k: torch.Tensor  # (B, nkv, max_len, hd)
    v: torch.Tensor  # (B, nkv, max_len, hd)

    @classmethod
    def of(cls, kv: torch.Tensor) -> LayerCache:
        n_kv = kv.shape[1] // 2
        return cls(kv, kv.narrow(1, 0, n_kv), kv.narrow(1, n_kv, n_kv))


def mm(x: torch.Tensor, lin: nn.Linear | Int8Linear | Int4Linear | Int8Rows) -> torch.Tensor:
    """x (N, in) @ W.T (+ b): what F.linear computes, minus its reshapes."""
    if isinstance(lin, Int8Linear | Int4Linear | Int8Rows):
        return lin.matmul(x)
    if lin.bias is None:
        return torch.mm(x, lin.weight.t())
    return torch.addmm(lin.bias, x, lin.weight.t())


class RMSNorm(nn.Module):
    def __init__(self, size: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps
        self._eps: torch.Tensor | None = None  # made on first use, on the input's device

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (N, H)
        if x.dtype == torch.float32:
            eps = self._eps
            if eps is None:
                eps = self._eps = torch.full((1,), self.eps, device=x.device)
            norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)  # (N, 1)
            inv = torch.addcmul(eps, norm, norm, value=1.0 / x.shape[-1]).rsqrt_()
            return (x * inv).mul_(self.weight)  # 1 / sqrt(mean(x^2) + eps) * x * w
        # half precision: normalise in float32, scale after casting back (as the reference)
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * xf.to(x.dtype)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin_signed: torch.Tensor) -> torch.Tensor:
    """x * cos + rotate_half(x) * sin, with rotate_half's sign folded into the table.

    x: (B, T, heads, hd); cos, sin_signed: (T, heads, hd) or (T, 1, hd).
    """
    half = x.shape[-1] // 2
    swapped = torch.cat((x.narrow(-1, half, half), x.narrow(-1, 0, half)), dim=-1)
    return torch.addcmul(x * cos, swapped, sin_signed)


def attend(
    q: torch.Tensor,  # (B, nkv, L, hd)
    k: torch.Tensor,  # (B, nkv, S, hd)
    v: torch.Tensor,  # (B, nkv, S, hd)
    mask: torch.Tensor | None,  # (L, S) bool, True = may attend
    scale: float | None,
    softcap: float | None,
) -> torch.Tensor:  # (B, nkv, L, hd)
    """SDPA, or where scores are soft-capped (Gemma 2) the same computed step by step
    as the reference's eager attention: SDPA has no cap between product and softmax."""
    if softcap is None:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
    s = torch.matmul(q, k.transpose(-1, -2)) * (q.shape[-1] ** -0.5 if scale is None else scale)
    s = torch.tanh(s / softcap) * softcap  # (B, nkv, L, S)
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    return torch.matmul(torch.softmax(s, dim=-1, dtype=torch.float32).to(q.dtype), v)


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig, layer: int = 0) -> None:
        super().__init__()
        self.n_head, self.n_kv, self.hd = cfg.num_heads, cfg.num_kv_heads, cfg.head_dim
        self.group = cfg.q_per_kv
        qkv_out = (self.n_head + 2 * self.n_kv) * self.hd
        self.qkv = nn.Linear(cfg.hidden_size, qkv_out, bias=cfg.attention_bias)
        self.o_proj = nn.Linear(self.n_head * self.hd, cfg.hidden_size, bias=cfg.attention_out_bias)
        self.q_norm = RMSNorm(self.hd, cfg.rms_norm_eps) if cfg.qk_norm else None
        self.k_norm = RMSNorm(self.hd, cfg.rms_norm_eps) if cfg.qk_norm else None
        self.window = cfg.window(layer)  # None: attends over the whole prefix
        self.local_rope = self.window is not None and cfg.has_local_rope
        self.scale, self.softcap = cfg.query_scale, cfg.attn_softcap

    @property
    def kind(self) -> tuple[bool, int | None]:
        """What the shard computes once per step for all layers alike: (rope, window)."""
        return self.local_rope, self.window

    def _norm_qk(self, qkv: torch.Tensor) -> torch.Tensor:  # (..., nt, hd)
        """Qwen3 / Gemma 3: RMSNorm over each query and key head, before RoPE."""
        assert self.q_norm is not None and self.k_norm is not None
        nh, nkv = self.n_head, self.n_kv
        q = self.q_norm(qkv.narrow(-2, 0, nh))
        k = self.k_norm(qkv.narrow(-2, nh, nkv))
        return torch.cat((q, k, qkv.narrow(-2, nh + nkv, nkv)), dim=-2)

    def forward(
        self,
        x: torch.Tensor,  # (N, H)
        B: int,
        T: int,
        cos: torch.Tensor,  # (T, nt, hd), v rows 1
        sin: torch.Tensor,  # (T, nt, hd), sign-folded, v rows 0
        cache: LayerCache,
        pos: int,
        mask: torch.Tensor | None,  # (T*g, S) bool, None when T == 1
    ) -> torch.Tensor:
        nh, nkv, hd, g = self.n_head, self.n_kv, self.hd, self.group
        qkv = mm(x, self.qkv).view(B, T, nh + 2 * nkv, hd)
        if self.q_norm is not None:
            qkv = self._norm_qk(qkv)
        qkv = apply_rope(qkv, cos, sin)
        # new keys and values into the preallocated cache, in place, one copy
        cache.kv.narrow(2, pos, T).copy_(qkv.narrow(2, nh, 2 * nkv).transpose(1, 2))
        # query heads of one kv head side by side on the length axis: (B, nkv, T*g, hd)
        q = qkv.narrow(2, 0, nh)
        if T == 1:
            q = q.view(B, nkv, g, hd)
        else:
            q = q.reshape(B, T, nkv, g, hd).permute(0, 2, 1, 3, 4).reshape(B, nkv, T * g, hd)
        if q.dtype != cache.kv.dtype:
            q = q.to(cache.kv.dtype)
        end = pos + T
        lo = 0
        if T == 1 and self.window is not None:  # one position sees the window's last keys
            lo = max(0, end - self.window)
        y = attend(
            q,
            cache.k.narrow(2, lo, end - lo),
            cache.v.narrow(2, lo, end - lo),
            mask,
            self.scale,
            self.softcap,
        )  # (B, nkv, T*g, hd) in kv dtype
        if T == 1:
            y = y.view(B, nh * hd)
        else:
            y = y.view(B, nkv, T, g, hd).permute(0, 2, 1, 3, 4).reshape(B * T, nh * hd)
        if y.dtype != x.dtype:
            y = y.to(x.dtype)
        return mm(y, self.o_proj)  # (N, H)

    def forward_rows(
        self,
        x: torch.Tensor,  # (B, H): one new position for each of B sessions
        cos: torch.Tensor,  # (B, nt, hd): each row at its own position
        sin: torch.Tensor,  # (B, nt, hd)
        caches: list[LayerCache],  # each session's own cache (batch 1)
        positions: list[int],
    ) -> torch.Tensor:
        """Decode of B sessions at once: the projections read each weight once for all
        rows; each row's keys/values go to its own cache and its attention runs over its
        own prefix exactly as its solo step would (one SDPA per row)."""
        nh, nkv, hd, g = self.n_head, self.n_kv, self.hd, self.group
        B = x.shape[0]
        qkv = mm(x, self.qkv).view(B, nh + 2 * nkv, hd)
        if self.q_norm is not None:
            qkv = self._norm_qk(qkv)
        qkv = apply_rope(qkv, cos, sin)
        # split once for all rows; the loop below is per-row Python, so it stays short
        kv_dtype = caches[0].kv.dtype
        q_all = qkv.narrow(1, 0, nh).reshape(B, 1, nkv, g, hd)
        if q_all.dtype != kv_dtype:
            q_all = q_all.to(kv_dtype)
        new_kv = qkv.narrow(1, nh, 2 * nkv).unsqueeze(2)  # (B, 2 nkv, 1, hd)
        rows = []
        for q, kv, cache, pos in zip(
            q_all.unbind(0), new_kv.unbind(0), caches, positions, strict=True
        ):
            full = cache.kv[:, :, : pos + 1]  # (1, 2 nkv, pos+1, hd)
            full[0, :, pos:].copy_(kv)
            if self.window is not None:
                full = full[:, :, max(0, pos + 1 - self.window) :]
            y_row = attend(q, full[:, :nkv], full[:, nkv:], None, self.scale, self.softcap)
            rows.append(y_row.view(1, nh * hd))
        y = torch.cat(rows)  # (B, nh*hd)
        if y.dtype != x.dtype:
            y = y.to(x.dtype)
        return mm(y, self.o_proj)  # (B, H)


class MLP(nn.Module):
    """Gated MLP: down(act(gate(x)) * up(x)), gate and up fused; act is SiLU (SwiGLU)
    or tanh-approximated GELU (Gemma's GeGLU)."""

    def __init__(self, cfg: ModelConfig, intermediate_size: int | None = None) -> None:
        super().__init__()
        inter = cfg.intermediate_size if intermediate_size is None else intermediate_size
        self.gate_up = nn.Linear(cfg.hidden_size, 2 * inter, bias=False)
        self.down = nn.Linear(inter, cfg.hidden_size, bias=False)
        self.gelu = cfg.hidden_act == "gelu_pytorch_tanh"

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (N, H)
        gate, up = mm(x, self.gate_up).chunk(2, dim=-1)  # (N, I) each
        act = F.gelu(gate, approximate="tanh") if self.gelu else F.silu(gate)
        return mm(act.mul_(up), self.down)  # (N, H)


class MoE(nn.Module):
    """A mixture-of-experts MLP (Mixtral, Qwen3-MoE): top-k routing over whole experts.

    Each row's router picks ``k`` experts by softmax probability; the row's output is
    the weighted sum of those experts' gated MLPs. Experts run in ascending order and
    add into the output with ``index_add_``, as the reference does, so a row's sum is
    formed in the same order. A node holds every expert of its layers.
    (N rows, H hidden, E experts, k experts per row.)"""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.router = nn.Linear(cfg.hidden_size, cfg.num_experts, bias=False)
        self.experts = nn.ModuleList(
            MLP(cfg, cfg.expert_intermediate_size) for _ in range(cfg.num_experts)
        )
        self.top_k = cfg.experts_per_token
        self.renormalise = cfg.norm_topk_prob

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (N, H)
        probs = torch.softmax(mm(x, self.router).float(), dim=-1)  # (N, E) float32
        weights, chosen = torch.topk(probs, self.top_k, dim=-1)  # (N, k) each
        if self.renormalise:
            weights = weights / weights.sum(dim=-1, keepdim=True)
        out = torch.zeros_like(x)
        for e in chosen.unique().tolist():  # ascending
            rows, slot = torch.where(chosen == e)  # rows routed to e, and at which rank
            y = self.experts[e](x[rows]) * weights[rows, slot, None]  # (n_e, H)
            out.index_add_(0, rows, y.to(out.dtype))
        return out  # (N, H)


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig, layer: int = 0) -> None:
        super().__init__()
        self.input_norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.attn = Attention(cfg, layer)
        self.post_attention_norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)  # before the MLP
        self.mlp: MLP | MoE = MoE(cfg) if cfg.num_experts else MLP(cfg)
        # Gemma's sandwich: the attention and MLP outputs are normalised too
        sandwich = cfg.sandwich_norms
        self.attn_out_norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps) if sandwich else None
        self.mlp_out_norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps) if sandwich else None

    def _finish(self, x: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        """Residual adds around the attention output ``a`` and the MLP."""
        if self.attn_out_norm is not None:
            a = self.attn_out_norm(a)
        h = x + a
        m = self.mlp(self.post_attention_norm(h))
        if self.mlp_out_norm is not None:
            m = self.mlp_out_norm(m)
        return h.add_(m)  # (N, H); h is ours to reuse

    def forward(
        self,
        x: torch.Tensor,
        B: int,
        T: int,
        cos: torch.Tensor,
        sin: torch.Tensor,
        cache: LayerCache,
        pos: int,
        mask: torch.Tensor | None,
    ) -> torch.Tensor:
        return self._finish(x, self.attn(self.input_norm(x), B, T, cos, sin, cache, pos, mask))

    def forward_rows(
        self,
        x: torch.Tensor,
        cos: torch.Tensor,
        sin: torch.Tensor,
        caches: list[LayerCache],
        positions: list[int],
    ) -> torch.Tensor:  # (B, H): one position of each of B sessions
        return self._finish(
            x, self.attn.forward_rows(self.input_norm(x), cos, sin, caches, positions)
        )


def rope_tables(
    cos: torch.Tensor, sin: torch.Tensor, n_qk: int, n_v: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """(T, hd) tables -> (T, n_qk + n_v, hd): rotate q/k heads, leave v heads as they are."""
    T, hd = cos.shape
    ones = torch.ones(T, n_v, hd, dtype=cos.dtype, device=cos.device)
    cos_h = torch.cat((cos.unsqueeze(1).expand(T, n_qk, hd), ones), dim=1)
    sin_h = torch.cat((sin.unsqueeze(1).expand(T, n_qk, hd), torch.zeros_like(ones)), dim=1)
    return cos_h, sin_h


def causal_group_mask(
    T: int, pos: int, group: int, device: torch.device, window: int | None = None
) -> torch.Tensor | None:
    """Row t*g+j (new position pos+t, query head j of its group) sees keys [0, pos+t],
    or with a sliding window only keys (pos+t-window, pos+t]."""
    if T == 1:
        return None  # one new position sees the whole cache (a window narrows the keys)
    rows = torch.arange(T, device=device).repeat_interleave(group) + pos  # (T*g,)
    keys = torch.arange(pos + T, device=device)  # (S,)
    mask = keys[None, :] <= rows[:, None]  # (T*g, S)
    if window is not None:
        mask &= keys[None, :] > rows[:, None] - window
    return mask
