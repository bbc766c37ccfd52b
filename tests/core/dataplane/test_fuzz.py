"""Property-based data-plane fuzzing against a live node (Hypothesis).

Generated opens, frames and message sequences go over real WebSockets to a
node serving a tiny model on loopback. Whatever arrives, the properties are:

* the node never dies: after every example a good session beside the bad one
  still steps and closes with a signed receipt, and health still answers;
* bad input ends only its own session, with a JSON ``error`` naming a wire
  reason code, and never as ``internal-error`` (that is the node's own fault);
* nothing is left behind: no open sessions, no reserved KV, and the process's
  memory stays bounded over the whole run.

Examples are bounded (``MESHNET_WIRE_FUZZ_EXAMPLES``) and derandomized so CI
runs the same cases in modest time.
"""

from __future__ import annotations

import asyncio
import json
import os
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
import torch
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from core.dataplane import frames, wire
from core.dataplane.receipts import verify_receipt
from core.runtime.sessions import SessionManager
from core.runtime.shard import Shard
from tests.core.dataplane.conftest import (
    HIDDEN,
    MAX_FRAME_BYTES,
    NODE_A_SEED,
    NODE_B_SEED,
    VOCAB,
    Key,
    Node,
    route_hops,
    start_node,
    ticket_for,
    wait_until,
)
from tests.support.hop_client import HopClient

EXAMPLES = int(os.environ.get("MESHNET_WIRE_FUZZ_EXAMPLES", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
REASONS = {
    wire.BAD_TICKET,
    wire.TICKET_EXPIRED,
    wire.WRONG_NODE,
    wire.WRONG_RANGE,
    wire.WRONG_FINGERPRINT,
    wire.FRAME_TOO_LARGE,
    wire.BAD_FRAME,
    wire.BAD_SHAPE,
    wire.POSITION_OUT_OF_RANGE,
    wire.NO_CAPACITY,
    wire.BAD_REQUEST,
}
MEMORY_SLACK_BYTES = 256 * 1024 * 1024
DEEP = 5000


@pytest.fixture(scope="module")
def pair(tiny_model: Path, tracker_key: Key) -> Iterator[tuple[Node, Node, Key]]:
    """Node A [0, 2) and node B [1, 4) (started at 2 by tickets), each with a KV budget."""
    shard_a, shard_b = Shard.load(tiny_model, 0, 2), Shard.load(tiny_model, 1, 4)
    budget = 64 * shard_a.kv_bytes_per_token() * 128
    a = start_node(
        Key.from_seed(NODE_A_SEED),
        shard_a,
        tracker_key,
        sessions=SessionManager(shard_a, kv_budget_bytes=budget),
    )
    b = start_node(
        Key.from_seed(NODE_B_SEED),
        shard_b,
        tracker_key,
        sessions=SessionManager(shard_b, kv_budget_bytes=budget),
    )
    try:
        yield a, b, tracker_key
    finally:
        a.server.stop()
        b.server.stop()


# -- strategies ----------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
sampling = st.dictionaries(
    st.sampled_from(["temperature", "top_k", "top_p", "seed", "logprobs", "n"]),
    json_values | st.integers(min_value=-(2**70), max_value=2**70),
    max_size=5,
)
max_lengths = st.one_of(
    st.integers(min_value=-10, max_value=1_000_000), json_values, st.just(2**64)
)


def deep_json(depth: int) -> str:
    return "[" * depth + "]" * depth


def header_frame(header: object, tail: bytes = b"") -> bytes:
    """A frame whose header is `header` (any JSON) and whose data is `tail`."""
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + tail


tensor_frames = st.builds(
    lambda name, dtype, shape, position: header_frame(
        {
            "__metadata__": {frames.POSITION_KEY: position},
            name: {"dtype": dtype, "shape": shape, "data_offsets": [0, 8]},
        },
        b"\0" * 8,
    ),
    st.sampled_from([frames.INPUT_IDS, frames.HIDDEN, "x"]),
    st.sampled_from(["I64", "F32", "F16", "BF16", "U8", "nope"]),
    st.lists(st.integers(min_value=-2, max_value=2**40), max_size=4),
    st.sampled_from(["0", "1", "-1", "x", "99999999999999999999"]),
)
raw_bytes = st.binary(max_size=256)
oversize = st.integers(min_value=MAX_FRAME_BYTES + 1, max_value=MAX_FRAME_BYTES * 3).map(
    lambda n: b"\0" * n
)
control_texts = st.one_of(
    json_values.map(json.dumps),
    st.text(max_size=64),
    st.just(json.dumps({"type": "close"})),
    st.just(json.dumps({"type": "open"})),
    st.just(deep_json(DEEP)),
)
messages = st.one_of(
    st.just("good-step"),
    tensor_frames,
    raw_bytes,
    oversize,
    control_texts,
    st.binary(max_size=64).map(lambda b: header_frame({"__metadata__": b.hex()}, b)),
    st.just(b"\x00" * 8 + b"{}"),
    st.just(struct.pack("<Q", 2**63) + b"{}"),
    st.just(header_frame(json.loads(deep_json(50)))),
    st.just(struct.pack("<Q", 2 * DEEP) + deep_json(DEEP).encode()),
)


# -- the scenario --------------------------------------------------------------------------


def good_step(node: Node, position: int) -> bytes:
    if node.shard.is_first:
        tensors: dict[str, torch.Tensor] = {"input_ids": torch.randint(0, VOCAB, (1, 1))}
    else:
        tensors = {"hidden": torch.randn(1, 1, HIDDEN)}
    return frames.encode_frame(tensors, {frames.POSITION_KEY: str(position)})


async def drive(node: Node, first: str | bytes, rest: list[Any]) -> list[dict[str, Any]]:
    """Send `first` then `rest` on one connection; the error messages the node sent."""
    errors: list[dict[str, Any]] = []
    position = 0
    async with connect(node.server.session_url, max_size=None) as ws:
        try:
            await ws.send(first)
            answer = await asyncio.wait_for(ws.recv(), 10)
            parsed = json.loads(answer) if isinstance(answer, str) else {"type": "binary"}
            if parsed.get("type") != "opened":
                errors.append(parsed)
                rest = []
            for message in rest:
                if message == "good-step":
                    message = good_step(node, position)
                    position += 1
                await ws.send(message)
                reply = await asyncio.wait_for(ws.recv(), 10)
                if isinstance(reply, str):
                    errors.append(json.loads(reply))
                    break
        except ConnectionClosed:
            pass
        # Whatever was said last, read what the node answers until it closes or idles.
        try:
            while True:
                reply = await asyncio.wait_for(ws.recv(), 0.2)
                if isinstance(reply, str):
                    errors.append(json.loads(reply))
        except (ConnectionClosed, TimeoutError):
            pass
    return errors


async def beside_a_good_session(node: Node, tracker: Key, hops: Any, bad: Any) -> list[Any]:
    good = HopClient(node.url)
    await good.open(ticket_for(tracker, hops), 32, {"temperature": 0.0})
    try:
        await good.step_bytes(good_step(node, 0))
        errors = await bad
        await good.step_bytes(good_step(node, 1))
        receipt = verify_receipt(await good.close(), node.key.public)
        assert receipt.steps == 2
    finally:
        await good.abort()
    await wait_until(lambda: node.sessions.open_count == 0)
    assert node.sessions.reserved_bytes == 0 and not node.server._ctx.live
    return errors


def check_errors(errors: list[dict[str, Any]]) -> None:
    for error in errors:
        if error.get("type") == "receipt":
            continue
        assert error.get("type") == "error", error
        assert error.get("reason") in REASONS, error
        assert isinstance(error.get("message"), str) and error["message"], error


class Memory:
    def __init__(self) -> None:
        self.process = psutil.Process()
        self.baseline: int | None = None
        self.peak = 0

    def sample(self) -> None:
        rss = self.process.memory_info().rss
        self.baseline = rss if self.baseline is None else self.baseline
        self.peak = max(self.peak, rss)


MEMORY = Memory()


@FUZZ
@given(
    target=st.sampled_from(["a", "b"]),
    first=st.one_of(
        control_texts,
        raw_bytes,
        st.builds(
            lambda ml, s, t: json.dumps({"type": "open", "max_length": ml, "sampling": s, **t}),
            max_lengths,
            sampling,
            st.dictionaries(st.sampled_from(["ticket", "type", "extra"]), json_values, max_size=2),
        ),
    ),
)
@example(target="a", first=deep_json(DEEP))
@example(target="b", first=json.dumps({"type": "open", "max_length": 8, "ticket": []}))
def test_fuzzed_opens_end_only_their_own_session_with_a_reason(
    pair: tuple[Node, Node, Key], target: str, first: str | bytes
) -> None:
    a, b, tracker = pair
    node = a if target == "a" else b
    hops = route_hops(a, b)
    MEMORY.sample()
    errors = asyncio.run(beside_a_good_session(node, tracker, hops, drive(node, first, [])))
    check_errors(errors)
    assert errors, "the node must say why it refused the open"
    MEMORY.sample()


@FUZZ
@given(
    target=st.sampled_from(["a", "b"]),
    max_length=st.integers(min_value=1, max_value=128),
    sampling=st.one_of(st.none(), sampling),
    rest=st.lists(messages, min_size=1, max_size=6),
)
@example(target="a", max_length=8, sampling=None, rest=[deep_json(DEEP)])
@example(
    target="b", max_length=8, sampling=None, rest=[header_frame(json.loads("[" * 90 + "]" * 90))]
)
@example(target="a", max_length=2, sampling=None, rest=["good-step"] * 3)
def test_fuzzed_message_sequences_end_only_their_own_session_with_a_reason(
    pair: tuple[Node, Node, Key],
    target: str,
    max_length: int,
    sampling: dict[str, Any] | None,
    rest: list[Any],
) -> None:
    a, b, tracker = pair
    node = a if target == "a" else b
    hops = route_hops(a, b)
    opening: dict[str, Any] = {
        "type": "open",
        "ticket": ticket_for(tracker, hops),
        "max_length": max_length,
    }
    if sampling is not None:
        opening["sampling"] = sampling
    MEMORY.sample()
    errors = asyncio.run(
        beside_a_good_session(node, tracker, hops, drive(node, json.dumps(opening), rest))
    )
    check_errors(errors)
    MEMORY.sample()


def test_memory_stayed_bounded_and_health_still_answers(pair: tuple[Node, Node, Key]) -> None:
    """Runs after the fuzzing above (same module): the node is alive and did not balloon."""
    import httpx

    for node in pair[:2]:
        health = httpx.get(f"{node.server.http_url}{wire.HEALTH_PATH}", timeout=10).json()
        assert health["open_sessions"] == 0
    if MEMORY.baseline is not None:
        assert MEMORY.peak - MEMORY.baseline < MEMORY_SLACK_BYTES
