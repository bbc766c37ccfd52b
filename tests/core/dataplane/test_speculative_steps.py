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


def step_frame(name: str, x: torch.Tensor, position: int, **flags: bool) -> bytes:
    metadata = {frames.POSITION_KEY: str(position)}
    if flags.get("rewind"):
        metadata[frames.REWIND_KEY] = "1"
    if flags.get("verify"):
        metadata[frames.VERIFY_KEY] = "1"
    return frames.encode_frame({name: x}, metadata)


async def through(
    a: HopClient, b: HopClient, ids: list[int], position: int, **flags: bool
) -> list[int]:
    """One step of `ids` through both hops; the last hop's token ids."""
    first = await a.step_bytes(step_frame("input_ids", torch.tensor([ids]), position, **flags))
    reply = await b.step_bytes(step_frame("hidden", first.tensors["hidden"], position, **flags))
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


def test_a_sampling_session_refuses_to_verify(nodes: tuple[Node, Node], tracker_key: Key) -> None:
    a, b = nodes

    async def scenario() -> ProtocolError:
        ticket = ticket_for(tracker_key, route_hops(a, b), route_session_id="spec-3")
        async with HopClient(a.url) as hop_a, HopClient(b.url) as hop_b:
            await hop_a.open(ticket, 32)
            await hop_b.open(ticket, 32, {"temperature": 0.8, "seed": 1})
            with pytest.raises(ProtocolError) as caught:
                await through(hop_a, hop_b, PROMPT, 0, verify=True)
            return caught.value

    assert asyncio.run(scenario()).reason == wire.BAD_REQUEST
