"""Generation through a chain of shards in one process (tests, benchmarks, the doctor).

The same session protocol a distributed route uses, minus the network: each
shard gets a session, the prompt is prefilled through the chain once, then one
position per step.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence

import torch

from core.errors import ConfigError, PositionError
from core.runtime.sampling import SamplingParams
from core.runtime.sessions import SessionManager
from core.runtime.shard import Shard


def check_chain(shards: Sequence[Shard]) -> None:
    """The shards must cover [0, num_layers) in order with no hole or overlap."""
    if not shards:
        raise ConfigError("generate_local needs at least one shard", reason="bad-chain")
    n = shards[0].config.num_layers
    expected = 0
    for shard in shards:
        if shard.start != expected:
            raise ConfigError(
                f"shard [{shard.start}, {shard.end}) should start at layer "
                f"{expected}; chain is "
                f"{[(s.start, s.end) for s in shards]}",
                reason="bad-chain",
            )
        expected = shard.end
    if expected != n:
        raise ConfigError(f"chain ends at layer {expected}, the model has {n}", reason="bad-chain")


def generate_local(
    shards: Sequence[Shard],
    input_ids: list[int],
    max_new_tokens: int,
    sampling: SamplingParams = SamplingParams(),  # noqa: B008 - frozen dataclass
    stop_ids: Collection[int] = (),
) -> Iterator[int]:
    """Yield up to max_new_tokens sampled token ids, stopping after a stop id."""
    check_chain(shards)
    if not input_ids:
        raise ConfigError(
            "input_ids is empty; the prompt needs at least one token", reason="empty-prompt"
        )
    if max_new_tokens <= 0:
        return
    max_length = len(input_ids) + max_new_tokens
    limit = shards[0].config.max_position_embeddings
    if max_length > limit:
        raise PositionError(
            f"prompt {len(input_ids)} + {max_new_tokens} new tokens = "
            f"{max_length} exceeds the model's {limit} positions"
        )
    managers = [SessionManager(s) for s in shards]
    sessions = [m.open(max_length, sampling=sampling) for m in managers]
    try:
        x = torch.tensor([input_ids], dtype=torch.int64)  # (1, T)
        for produced in range(max_new_tokens):
            for session in sessions[:-1]:
                x = session.step(x).hidden  # type: ignore[assignment]
            token_ids = sessions[-1].step(x).token_ids
            assert token_ids is not None
            token = int(token_ids[0])
            yield token
            if token in stop_ids or produced + 1 == max_new_tokens:
                return
            x = token_ids.view(1, 1)
    finally:
        for session in sessions:
            session.close()
