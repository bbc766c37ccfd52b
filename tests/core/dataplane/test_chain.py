"""Two real shard servers on loopback chained by a real WebSocket client
reproduce the single-process result of the same shards."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import torch

from core.dataplane.receipts import verify_receipt
from core.errors import ProtocolError
from core.runtime.generate import generate_local
from core.runtime.sampling import SamplingParams
from core.runtime.sessions import SessionManager
from core.runtime.shard import Shard
from tests.core.dataplane.conftest import Key, Node, route_hops, start_node, ticket_for
from tests.support.hop_client import HopClient

PROMPT = [5, 17, 99, 3, 250, 41]


async def remote_generate(
    a: Node, b: Node, tracker: Key, new_tokens: int, sampling: dict[str, Any]
) -> tuple[list[int], list[dict[str, Any]], list[torch.Tensor]]:
    """Prefill then decode one token per step through hop A then hop B."""
    ticket = ticket_for(tracker, route_hops(a, b))
    max_length = len(PROMPT) + new_tokens
    tokens: list[int] = []
    top_logprobs: list[torch.Tensor] = []
    async with HopClient(a.url) as hop_a, HopClient(b.url) as hop_b:
        assert (await hop_a.open(ticket, max_length))["layers"] == [0, 2]
        assert (await hop_b.open(ticket, max_length, sampling))["layers"] == [2, 4]
        x, position = torch.tensor([PROMPT]), 0
        for _ in range(new_tokens):
            hidden = (await hop_a.step({"input_ids": x}, position)).tensors["hidden"]
            reply = await hop_b.step({"hidden": hidden}, position)
            position += x.shape[1]
            tokens.append(int(reply.tensors["token_ids"][0]))
            top_logprobs.append(reply.tensors["top_logprobs"])
            x = torch.tensor([[tokens[-1]]])
        receipts = [await hop_a.close(), await hop_b.close()]
    return tokens, receipts, top_logprobs


@pytest.fixture(scope="module")
def reference_tail(tiny_model: Path) -> Shard:
    """Layers [2, 4) on their own: what node B computes when told to start at 2."""
    return Shard.load(tiny_model, 2, 4)


@pytest.mark.parametrize(
    "sampling",
    [
        {"temperature": 0.0, "logprobs": 3},
        {"temperature": 0.9, "top_k": 40, "top_p": 0.95, "seed": 1234, "logprobs": 2},
    ],
    ids=["greedy", "seeded-sampling"],
)
def test_two_hop_chain_reproduces_single_process_generation(
    nodes: tuple[Node, Node], tracker_key: Key, reference_tail: Shard, sampling: dict[str, Any]
) -> None:
    a, b = nodes
    tokens, _, top_logprobs = asyncio.run(remote_generate(a, b, tracker_key, 8, sampling))
    local = list(generate_local([a.shard, reference_tail], PROMPT, 8, SamplingParams(**sampling)))
    assert tokens == local
    assert all(lp.shape == (1, sampling["logprobs"]) for lp in top_logprobs)


def test_first_hop_hidden_states_equal_the_local_shard_output(
    nodes: tuple[Node, Node], tracker_key: Key
) -> None:
    a, b = nodes

    async def first_step() -> torch.Tensor:
        async with HopClient(a.url) as hop:
            await hop.open(ticket_for(tracker_key, route_hops(a, b)), 16)
            return (await hop.step({"input_ids": torch.tensor([PROMPT])}, 0)).tensors["hidden"]

    remote = asyncio.run(first_step())
    session = SessionManager(a.shard).open(16)
    local = session.step(torch.tensor([PROMPT])).hidden
    session.close()
    assert local is not None
    torch.testing.assert_close(remote, local, rtol=0, atol=0)


def test_each_hop_returns_a_receipt_signed_by_its_node_counting_its_work(
    nodes: tuple[Node, Node], tracker_key: Key
) -> None:
    a, b = nodes
    _, receipts, _ = asyncio.run(remote_generate(a, b, tracker_key, 4, {"temperature": 0.0}))
    first = verify_receipt(receipts[0], a.key.public)
    last = verify_receipt(receipts[1], b.key.public)
    assert (first.start, first.end, last.start, last.end) == (0, 2, 2, 4)
    for receipt in (first, last):
        assert receipt.route_session_id == "route-1" and receipt.epoch == 1
        assert receipt.steps == 4
        assert receipt.tokens == len(PROMPT) + 3  # prefill, then one position per decode step
    with pytest.raises(ProtocolError):  # A's receipt does not verify as B's
        verify_receipt(receipts[0], b.key.public)


def test_closing_a_session_frees_its_kv_cache_on_both_nodes(
    nodes: tuple[Node, Node], tracker_key: Key
) -> None:
    a, b = nodes
    asyncio.run(remote_generate(a, b, tracker_key, 2, {"temperature": 0.0}))
    assert a.sessions.open_count == 0 and b.sessions.open_count == 0
    assert a.sessions.reserved_bytes == 0 and b.sessions.reserved_bytes == 0


def test_a_whole_model_node_runs_a_later_hop_from_inside_its_shard(
    nodes: tuple[Node, Node], tiny_model: Path, tracker_key: Key, reference_tail: Shard
) -> None:
    """Two nodes that each hold the whole model certify only this way (issue 22): the
    second hop's shard starts at layer 0, yet it is opened at layer 2 and takes the
    first hop's hidden states, not token ids."""
    a, _ = nodes
    whole = start_node(Key.from_seed(b"w" * 32), Shard.load(tiny_model, 0, 4), tracker_key)
    try:
        hops = [
            {"node_id": a.key.node_id, "start": 0, "end": 2, "effective_start": 0},
            {"node_id": whole.key.node_id, "start": 0, "end": 4, "effective_start": 2},
        ]

        async def run() -> list[int]:
            ticket = ticket_for(tracker_key, hops, route_session_id="route-whole")
            tokens: list[int] = []
            async with HopClient(a.url) as hop_a, HopClient(whole.url) as hop_w:
                await hop_a.open(ticket, len(PROMPT) + 4)
                opened = await hop_w.open(ticket, len(PROMPT) + 4, {"temperature": 0.0})
                assert opened["layers"] == [2, 4]
                x, position = torch.tensor([PROMPT]), 0
                for _ in range(4):
                    hidden = (await hop_a.step({"input_ids": x}, position)).tensors["hidden"]
                    reply = await hop_w.step({"hidden": hidden}, position)
                    position += x.shape[1]
                    tokens.append(int(reply.tensors["token_ids"][0]))
                    x = torch.tensor([[tokens[-1]]])
                receipt = verify_receipt(await hop_w.close(), whole.key.public)
                assert (receipt.start, receipt.end) == (2, 4)
                await hop_a.close()
            return tokens

        local = generate_local(
            [a.shard, reference_tail], PROMPT, 4, SamplingParams(temperature=0.0)
        )
        assert asyncio.run(run()) == list(local)
    finally:
        whole.server.stop()
