"""A node that perturbs a fraction of its step replies: the plain liar of the hop-audit tests.

``MESHNET_TEST_LIE_RATE`` (a probability in (0, 1]) in a node process's environment,
or ``node.server._ctx.lie = Lie(...)`` on an in-process node, makes that node perturb
that fraction of its replies: hidden states scaled by ``1 + scale`` (default 0.05;
``MESHNET_TEST_LIE_SCALE``), a last hop's token ids shifted by one, and its receipts
signing what it sent. Nodes without a ``Lie`` stay honest, so honest and lying
in-process nodes share one process. The product has no such switch: this wraps
``HopSession._reply`` from the test side.
"""

from __future__ import annotations

import logging
import os
import random
from dataclasses import dataclass
from typing import Any

import torch

from core.dataplane import frames
from core.dataplane.hop import HopContext, HopSession
from core.dataplane.receipts import frame_digest

log = logging.getLogger(__name__)

LIE_RATE_ENV = "MESHNET_TEST_LIE_RATE"
LIE_SCALE_ENV = "MESHNET_TEST_LIE_SCALE"
_WRAPPED = "_meshnet_rate_liar"


@dataclass
class Lie:
    rate: float
    scale: float
    rng: random.Random

    def __post_init__(self) -> None:
        install_wrapper()  # a Lie set on a node's context needs the wrapped reply

    @classmethod
    def from_env(cls) -> Lie | None:
        try:
            rate = float(os.environ.get(LIE_RATE_ENV, "0") or 0)
            scale = float(os.environ.get(LIE_SCALE_ENV, "0.05") or 0.05)
        except ValueError:
            return None
        if not 0 < rate <= 1:
            return None
        log.warning("%s=%s: this node LIES on %.0f%% of its steps", LIE_RATE_ENV, rate, rate * 100)
        return cls(rate, scale, random.Random())

    def now(self) -> bool:
        return self.rng.random() < self.rate


def _perturbed(reply: bytes, lie: Lie, vocab_size: int) -> bytes:
    frame = frames.decode_frame(reply, len(reply))
    tensors = dict(frame.tensors)
    if frames.HIDDEN in tensors:
        tensors[frames.HIDDEN] = tensors[frames.HIDDEN] * (1.0 + lie.scale)
    else:
        ids = tensors[frames.TOKEN_IDS]
        tensors[frames.TOKEN_IDS] = ((ids + 1) % max(vocab_size, 2)).to(torch.int64)
    return frames.encode_frame(tensors, frame.metadata)


def install_wrapper() -> None:
    """Wrap the node's reply once; a context without a ``Lie`` answers honestly."""
    if getattr(HopSession._reply, _WRAPPED, False):
        return
    honest = HopSession._reply

    def _reply(self: HopSession, result: Any, meta: dict[str, str]) -> bytes:
        reply = honest(self, result, meta)
        lie: Lie | None = getattr(self._ctx, "lie", None)
        if lie is None or not lie.now():
            return reply
        vocab = int(getattr(self._shard.config, "vocab_size", 2))
        lied = _perturbed(reply, lie, vocab)
        self._output_sha256 = frame_digest(lied)  # its receipt signs what it sent
        return lied

    setattr(_reply, _WRAPPED, True)
    HopSession._reply = _reply  # type: ignore[method-assign]


def install() -> None:
    """In a node process: every hop context lies at the environment's rate."""
    install_wrapper()
    HopContext.lie = Lie.from_env()  # type: ignore[attr-defined]  # a context may override it
