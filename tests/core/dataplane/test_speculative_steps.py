"""Speculative steps through real shard servers (docs/wire.md#speculative-steps): a verify
step answers the greedy token after every position, a rewind frame drops rejected drafts
on every hop, and decoding then goes on exactly as plain greedy decoding does."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import torch

from core.dataplane import frames, wire
from core.errors import ProtocolError
from core.runtime.generate import generate_local
from core.runtime.shard import Shard
from tests.core.dataplane.conftest import Key, Node, route_hops, ticket_for
from tests.support.hop_client import HopClient

PROMPT = [int(t) for t in torch.randint(0, 256, (12,), generator=torch.Generator().manual_seed(3))]
NEW = 10


def step_frame(
    name: str, x: torch.Tensor, position: int, draft: list[int] | None = None, **flags: bool
) -> bytes:
    metadata = {frames.POSITION_KEY: str(position)}
    if flags.get("rewind"):
        metadata[frames.REWIND_KEY] = "1"
    if flags.get("verify"):
        metadata[frames.VERIFY_KEY] = "1"
    if draft is not None:
        metadata[frames.DRAFT_KEY] = ",".join(map(str, draft))
    return frames.encode_frame({name: x}, metadata)


async def through(
    a: HopClient,
    b: HopClient,
    ids: list[int],
    position: int,
    draft: list[int] | None = None,
    **flags: bool,
) -> list[int]:
    """One step of `ids` through both hops; the last hop's token ids."""
    first = await a.step_bytes(
        step_frame("input_ids", torch.tensor([ids]), position, draft, **flags)
    )
    reply = await b.step_bytes(
        step_frame("hidden", first.tensors["hidden"], position, draft, **flags)
    )
    return [int(t) for t in reply.tensors["token_ids"].reshape(-1)]


def test_verify_and_rewind_keep_greedy_decoding_exact(
    nodes: tuple[Node, Node], tracker_key: Key, tiny_model: Path
) -> None:
    a, b = nodes
    want = list(generate_local([Shard.load(tiny_model, 0, 4)], PROMPT, NEW))

    async def scenario() -> list[int]:
        ticket = ticket_for(tracker_key, route_hops(a, b), route_session_id="spec-1")
        async with HopClient(a.url) as hop_a, HopClient(b.url) as hop_b:
            await hop_a.open(ticket, len(PROMPT) + NEW + 8)
            opened = await hop_b.open(ticket, len(PROMPT) + NEW + 8, {"temperature": 0.0})
            assert opened["speculative_steps"] is True
            [token] = await through(hop_a, hop_b, PROMPT, 0)
            got, position = [token], len(PROMPT)
            # feed the token with a draft: two right guesses, then a wrong one
            wrong = (want[3] + 1) % 256
            verified = await through(
                hop_a, hop_b, [token, want[1], want[2], wrong], position, verify=True
            )
            assert verified[:3] == want[1:4]  # the route's token after each position
            got += verified[:3]  # two drafts kept, then the route's own next token
            # the wrong draft's position is forgotten on both hops
            position += 3
            [token] = await through(hop_a, hop_b, [verified[2]], position, rewind=True)
            got.append(token)
            position += 1
            while len(got) < NEW:
                [token] = await through(hop_a, hop_b, [got[-1]], position)
                got.append(token)
                position += 1
            return got

    assert asyncio.run(scenario()) == want


def test_a_lower_position_without_rewind_is_still_a_lost_step(
    nodes: tuple[Node, Node], tracker_key: Key
) -> None:
    a, b = nodes

    async def scenario() -> ProtocolError:
        ticket = ticket_for(tracker_key, route_hops(a, b), route_session_id="spec-2")
        async with HopClient(a.url) as hop_a:
            await hop_a.open(ticket, 32)
            await hop_a.step_bytes(step_frame("input_ids", torch.tensor([PROMPT]), 0))
            with pytest.raises(ProtocolError) as caught:
                await hop_a.step_bytes(step_frame("input_ids", torch.tensor([[5]]), 4))
            return caught.value

    assert asyncio.run(scenario()).reason == wire.POSITION_OUT_OF_RANGE


def test_a_draft_is_kept_by_the_last_hops_own_rule(
    nodes: tuple[Node, Node], tracker_key: Key, tiny_model: Path
) -> None:
    """Greedy: the drafts equal to plain decoding's tokens, then its next one. Sampling:
    a kept prefix of the draft and one token; without a draft it refuses to verify."""
    a, b = nodes
    want = list(generate_local([Shard.load(tiny_model, 0, 4)], PROMPT, NEW))

    async def scenario(sampling: dict[str, object], route: str) -> list[int]:
        ticket = ticket_for(tracker_key, route_hops(a, b), route_session_id=route)
        async with HopClient(a.url) as hop_a, HopClient(b.url) as hop_b:
            await hop_a.open(ticket, 40)
            await hop_b.open(ticket, 40, sampling)
            [token] = await through(hop_a, hop_b, PROMPT, 0)
            if sampling.get("temperature"):
                with pytest.raises(ProtocolError) as caught:
                    await through(hop_a, hop_b, [token, 5, 6], len(PROMPT), verify=True)
                assert caught.value.reason == wire.BAD_REQUEST
                return []
            draft = [want[1], want[2], (want[3] + 1) % 256]
            return await through(hop_a, hop_b, [token, *draft], len(PROMPT), draft, verify=True)

    assert asyncio.run(scenario({"temperature": 0.0}, "spec-3")) == want[1:4]

    async def sampled() -> list[int]:
        ticket = ticket_for(tracker_key, route_hops(a, b), route_session_id="spec-4")
        async with HopClient(a.url) as hop_a, HopClient(b.url) as hop_b:
            await hop_a.open(ticket, 40)
            await hop_b.open(ticket, 40, {"temperature": 0.7, "seed": 3})
            [token] = await through(hop_a, hop_b, PROMPT, 0)
            draft = [7, 8, 9]
            answer = await through(hop_a, hop_b, [token, *draft], len(PROMPT), draft, verify=True)
            assert 1 <= len(answer) <= 4 and answer[:-1] == draft[: len(answer) - 1]
            return answer

    asyncio.run(sampled())
    assert asyncio.run(scenario({"temperature": 0.7, "seed": 3}, "spec-5")) == []
