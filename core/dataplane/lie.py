"""A deliberately lying shard, for tests of the tracker's hop audits only.

Audits exist to catch a node that returns wrong outputs; proving they do needs a
real node process that lies. ``MESHNET_TEST_LIE_RATE`` (a probability in
(0, 1]) makes this node perturb that fraction of its step replies: hidden
states are scaled by ``1 + MESHNET_TEST_LIE_SCALE`` (default 0.05), a last
shard's sampled token is shifted by one. Unset or 0 (the default, always in
production) the node is honest and this module does nothing.
"""

from __future__ import annotations

import logging
import os
import random
from dataclasses import dataclass

import torch

log = logging.getLogger(__name__)

LIE_RATE_ENV = "MESHNET_TEST_LIE_RATE"
LIE_SCALE_ENV = "MESHNET_TEST_LIE_SCALE"


@dataclass
class Lie:
    rate: float
    scale: float
    rng: random.Random

    @classmethod
    def from_env(cls) -> Lie | None:
        try:
            rate = float(os.environ.get(LIE_RATE_ENV, "0") or 0)
            scale = float(os.environ.get(LIE_SCALE_ENV, "0.05") or 0.05)
        except ValueError:
            return None
        if not 0 < rate <= 1:
            return None
        log.warning(
            "%s=%s: this node LIES on %.0f%% of its steps (tests only)",
            LIE_RATE_ENV,
            rate,
            rate * 100,
        )
        return cls(rate, scale, random.Random())

    def now(self) -> bool:
        return self.rng.random() < self.rate

    def hidden(self, hidden: torch.Tensor) -> torch.Tensor:
        return hidden * (1.0 + self.scale)

    def tokens(self, token_ids: torch.Tensor, vocab_size: int) -> torch.Tensor:
        return (token_ids + 1) % max(vocab_size, 2)
