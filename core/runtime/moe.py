"""A mixture-of-experts MLP (Mixtral, Qwen3-MoE): top-k routing over whole experts.

Each row's router picks ``k`` experts by softmax probability; the row's output is
the weighted sum of those experts' gated MLPs. Experts run in ascending order and
add into the output with ``index_add_``, as the reference does, so a row's sum is
formed in the same order. A node holds every expert of its layers.

Shapes: N rows, H hidden, E experts, k experts per row.
"""

from __future__ import annotations

import torch
from torch import nn

from core.runtime.config import ModelConfig
from core.runtime.layers import MLP, mm


class MoE(nn.Module):
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
