"""Every bad open or step ends only its own session, with the wire reason code,
and frees its KV cache; a good session open on the same server keeps working."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import pytest
import torch
from websockets.asyncio.client import connect

from core.dataplane import wire
from core.dataplane.receipts import verify_receipt
from core.errors import ProtocolError
from tests.core.dataplane.conftest import (
    FINGERPRINT,
    HIDDEN,
    MAX_FRAME_BYTES,
    VOCAB,
    Key,
    Node,
    route_hops,
    ticket_for,
    wait_until,
)
from tests.support.hop_client import HopClient


@dataclass
class Ctx:
    a: Node
    b: Node
    tracker: Key

    def ticket(self, **kwargs: object) -> dict[str, object]:
        return ticket_for(self.tracker, route_hops(self.a, self.b), **kwargs)  # type: ignore[arg-type]


Bad = Callable[[Ctx, Node], Awaitable[object]]


def step_input(node: Node, steps: int = 2) -> dict[str, torch.Tensor]:
    if node.shard.is_first:
        return {"input_ids": torch.randint(0, VOCAB, (1, steps))}
    return {"hidden": torch.randn(1, steps, HIDDEN)}


async def opened(ctx: Ctx, node: Node, max_length: int = 16) -> HopClient:
    hop = HopClient(node.url)
    await hop.open(ctx.ticket(), max_length, {"temperature": 0.0})
    return hop


async def run_beside_good_session(ctx: Ctx, node: Node, bad: Bad) -> ProtocolError:
    """Open a good session, do `bad` on a second connection, then use the good one."""
    good = await opened(ctx, node)
    await good.step(step_input(node, 3), 0)
    try:
        with pytest.raises(ProtocolError) as caught:
            await bad(ctx, node)
        await wait_until(lambda: node.sessions.open_count == 1)
        await good.step(step_input(node, 1), 3)
        receipt = verify_receipt(await good.close(), node.key.public)
        assert (receipt.steps, receipt.tokens) == (2, 4)
    finally:
        await good.abort()
    await wait_until(lambda: node.sessions.open_count == 0)
    return caught.value


async def bad_open(ctx: Ctx, node: Node, ticket: object, max_length: int = 16) -> None:
    async with HopClient(node.url) as hop:
        await hop.open(ticket, max_length)  # type: ignore[arg-type]


async def bad_step(ctx: Ctx, node: Node, data: bytes, max_length: int = 16) -> None:
    async with HopClient(node.url) as hop:
        await hop.open(ctx.ticket(), max_length)
        await hop.step_bytes(data)


async def bad_tensors(
    ctx: Ctx, node: Node, tensors: dict[str, torch.Tensor], position: int = 0
) -> None:
    async with HopClient(node.url) as hop:
        await hop.open(ctx.ticket(), 16)
        await hop.step(tensors, position)


async def bad_raw(ctx: Ctx, node: Node, first: str | bytes) -> None:
    async with connect(node.server.session_url) as ws:
        await ws.send(first)
        reply = json.loads(await ws.recv())
        assert reply["type"] == "error"
        raise ProtocolError(reply["message"], reason=reply["reason"])


async def no_tracker_key(ctx: Ctx, node: Node) -> None:
    node.tracker_key[0] = None
    try:
        await bad_open(ctx, node, ctx.ticket())
    finally:
        node.tracker_key[0] = ctx.tracker.public


def other_hops(ctx: Ctx, **mine: object) -> list[dict[str, object]]:
    hop = {"node_id": ctx.a.key.node_id, "start": 0, "end": 2, "effective_start": 0, **mine}
    return [hop]


F32_IDS = {"input_ids": torch.zeros(1, 2)}
CASES: list[tuple[str, str, Bad, str]] = [
    ("missing ticket", "a", lambda c, n: bad_open(c, n, None), wire.BAD_TICKET),
    (
        "expired ticket",
        "a",
        lambda c, n: bad_open(c, n, c.ticket(expires_at=time.time() - 1)),
        wire.TICKET_EXPIRED,
    ),
    (
        "forged signature",
        "a",
        lambda c, n: bad_open(
            c, n, {**c.ticket(), "signature": wire.b64encode(c.b.key.sign(b"x"))}
        ),
        wire.BAD_TICKET,
    ),
    (
        "ticket signed by a node",
        "a",
        lambda c, n: bad_open(c, n, ticket_for(c.a.key, route_hops(c.a, c.b))),
        wire.BAD_TICKET,
    ),
    ("no tracker key yet", "a", no_tracker_key, wire.BAD_TICKET),
    (
        "ticket for another node",
        "a",
        lambda c, n: bad_open(c, n, ticket_for(c.tracker, other_hops(c, node_id=c.b.key.node_id))),
        wire.WRONG_NODE,
    ),
    (
        "ticket for another range",
        "a",
        lambda c, n: bad_open(c, n, ticket_for(c.tracker, other_hops(c, end=3))),
        wire.WRONG_RANGE,
    ),
    (
        "ticket for another fingerprint",
        "a",
        lambda c, n: bad_open(
            c, n, c.ticket(fingerprint={**FINGERPRINT, "model_artifact_digest": "f" * 64})
        ),
        wire.WRONG_FINGERPRINT,
    ),
    (
        "max_length past the model",
        "a",
        lambda c, n: bad_open(c, n, c.ticket(), 10_000),
        wire.POSITION_OUT_OF_RANGE,
    ),
    (
        "frame just over the limit",
        "a",
        lambda c, n: bad_step(c, n, b"\0" * (MAX_FRAME_BYTES + 1)),
        wire.FRAME_TOO_LARGE,
    ),
    (
        "frame far over the limit",
        "b",
        lambda c, n: bad_step(c, n, b"\0" * (MAX_FRAME_BYTES * 8)),
        wire.FRAME_TOO_LARGE,
    ),
    ("garbage bytes", "b", lambda c, n: bad_step(c, n, b"\x07garbage" * 10), wire.BAD_FRAME),
    (
        "wrong hidden size",
        "b",
        lambda c, n: bad_tensors(c, n, {"hidden": torch.zeros(1, 2, HIDDEN - 1)}),
        wire.BAD_SHAPE,
    ),
    (
        "wrong hidden dtype",
        "b",
        lambda c, n: bad_tensors(c, n, {"hidden": torch.zeros(1, 2, HIDDEN, dtype=torch.float16)}),
        wire.BAD_SHAPE,
    ),
    ("wrong input_ids dtype", "a", lambda c, n: bad_tensors(c, n, F32_IDS), wire.BAD_SHAPE),
    (
        "wrong tensor name",
        "a",
        lambda c, n: bad_tensors(c, n, {"hidden": torch.zeros(1, 2, HIDDEN)}),
        wire.BAD_FRAME,
    ),
    (
        "token id past the vocabulary",
        "a",
        lambda c, n: bad_tensors(c, n, {"input_ids": torch.tensor([[1, VOCAB]])}),
        wire.BAD_FRAME,
    ),
    (
        "non-finite hidden states",
        "b",
        lambda c, n: bad_tensors(c, n, {"hidden": torch.full((1, 1, HIDDEN), float("nan"))}),
        wire.BAD_FRAME,
    ),
    (
        "positions past max_length",
        "a",
        lambda c, n: bad_tensors(c, n, {"input_ids": torch.zeros(1, 17, dtype=torch.int64)}),
        wire.POSITION_OUT_OF_RANGE,
    ),
    (
        "position that skips ahead",
        "b",
        lambda c, n: bad_tensors(c, n, {"hidden": torch.zeros(1, 1, HIDDEN)}, position=5),
        wire.POSITION_OUT_OF_RANGE,
    ),
    ("open that is not JSON", "a", lambda c, n: bad_raw(c, n, "{not json"), wire.BAD_FRAME),
    ("binary before open", "a", lambda c, n: bad_raw(c, n, b"\0" * 16), wire.BAD_FRAME),
    ("step before open", "a", lambda c, n: bad_raw(c, n, '{"type": "close"}'), wire.BAD_FRAME),
]


@pytest.mark.parametrize(
    ("target", "bad", "reason"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_session_ends_with_its_reason_while_a_good_session_keeps_working(
    nodes: tuple[Node, Node], tracker_key: Key, target: str, bad: Bad, reason: str
) -> None:
    a, b = nodes
    ctx = Ctx(a, b, tracker_key)
    node = a if target == "a" else b
    refused = asyncio.run(run_beside_good_session(ctx, node, bad))
    assert refused.reason == reason
    assert refused.message  # a sentence the operator can act on


def test_bad_sampling_is_refused_on_the_last_hop(
    nodes: tuple[Node, Node], tracker_key: Key
) -> None:
    a, b = nodes

    async def scenario() -> ProtocolError:
        async with HopClient(b.url) as hop:
            with pytest.raises(ProtocolError) as caught:
                await hop.open(ticket_for(tracker_key, route_hops(a, b)), 8, {"top_p": 0.0})
        return caught.value

    assert asyncio.run(scenario()).reason == wire.BAD_REQUEST


def test_abrupt_client_disconnect_frees_the_session(
    nodes: tuple[Node, Node], tracker_key: Key
) -> None:
    a, b = nodes

    async def scenario() -> None:
        hop = await opened(Ctx(a, b, tracker_key), a)
        await hop.step(step_input(a, 2), 0)
        assert a.sessions.open_count == 1
        hop._connection().transport.abort()  # a crash: no close frame, no close message
        await wait_until(lambda: a.sessions.open_count == 0)

    asyncio.run(scenario())
    assert a.sessions.reserved_bytes == 0
