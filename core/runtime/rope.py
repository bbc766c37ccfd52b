"""Rotary position embeddings: inverse frequencies and a grow-on-demand cos/sin table.

The table is computed in float32 exactly as the reference does (positions times
inverse frequencies, duplicated halves, cos/sin) and cast once to the compute
dtype, so a decode step only slices it.
"""

from __future__ import annotations

import math
import threading

import torch

from core.runtime.config import ModelConfig


def inverse_frequencies(cfg: ModelConfig, *, local: bool = False) -> torch.Tensor:
    """The full-attention layers' frequencies, or with ``local`` the sliding layers' own
    (Gemma 3 gives them another base)."""
    dim = cfg.head_dim
    theta, scaling = cfg.rope_theta, cfg.rope_scaling
    if local and cfg.local_rope_theta is not None:
        theta, scaling = cfg.local_rope_theta, cfg.local_rope_scaling
    exponents = torch.arange(0, dim, 2, dtype=torch.int64, device="cpu").to(torch.float) / dim
    inv_freq = 1.0 / (theta**exponents)  # (hd/2,)
    if scaling is None:
        return inv_freq
    if scaling["rope_type"] == "linear":
        return inv_freq / float(scaling["factor"])
    # "llama3": long wavelengths slowed by `factor`, short ones kept, a smooth ramp between.
    factor = float(scaling["factor"])
    low, high = float(scaling["low_freq_factor"]), float(scaling["high_freq_factor"])
    old_ctx = float(scaling["original_max_position_embeddings"])
    low_wavelen, high_wavelen = old_ctx / low, old_ctx / high
    wavelen = 2 * math.pi / inv_freq
    scaled = torch.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
    smooth = (old_ctx / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    is_medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
    return torch.where(is_medium, smoothed, scaled)


class RopeTable:
    """cos/sin for positions [0, n), grown by doubling under a lock.

    Readers take the current tensors and slice them; growth swaps in new tensors,
    so a reader holding the old pair still sees valid values for its positions.
    """

    def __init__(
        self, cfg: ModelConfig, dtype: torch.dtype, device: torch.device, *, local: bool = False
    ) -> None:
        self.inv_freq = inverse_frequencies(cfg, local=local).to(device)
        self.dtype = dtype
        self.device = device
        self._lock = threading.Lock()
        empty = torch.empty(0, cfg.head_dim, dtype=dtype, device=device)
        self._table = (empty, empty)  # swapped as one tuple so readers see a consistent pair

    def get(self, end: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(cos, sign-folded sin) covering positions [0, end): (>=end, hd) each."""
        table = self._table
        if table[0].shape[0] >= end:
            return table
        with self._lock:
            if self._table[0].shape[0] < end:
                n = max(end, 2 * self._table[0].shape[0], 256)
                pos = torch.arange(n, dtype=torch.float32, device=self.device)
                freqs = pos[:, None] * self.inv_freq[None, :]  # (n, hd/2)
                emb = torch.cat((freqs, freqs), dim=-1)  # (n, hd)
                sin = emb.sin()
                half = sin.shape[-1] // 2
                # rotate_half's minus sign folded into the first half (see layers.apply_rope)
                sin_signed = torch.cat((-sin[:, :half], sin[:, half:]), dim=-1)
                self._table = (emb.cos().to(self.dtype), sin_signed.to(self.dtype))
            return self._table
