"""Fixtures for the data-plane tests: a tiny random Llama on disk, fixed keys,
real shard servers on loopback.

Node A serves layers [0, 2); node B serves [1, 4) and is told by the ticket to
start at layer 2 (an overlapping hop), so every chain test also exercises
``effective_start``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from core.dataplane import wire
from core.dataplane.server import DataPlaneServer
from core.runtime.sessions import SessionManager
from core.runtime.shard import Shard
from tests.support.tickets import sign_ticket
from tests.tiny_llama import save_tiny_llama

NUM_LAYERS = 4
HIDDEN = 64
VOCAB = 256
MAX_FRAME_BYTES = 16 * 1024
FINGERPRINT = {"model_artifact_digest": "a" * 64, "runtime_recipe_digest": "b" * 64}
TRACKER_SEED = bytes.fromhex("11" * 32)
NODE_A_SEED = bytes.fromhex("22" * 32)
NODE_B_SEED = bytes.fromhex("33" * 32)


@dataclass(frozen=True)
class Key:
    private: Ed25519PrivateKey

    @classmethod
    def from_seed(cls, seed: bytes) -> Key:
        return cls(Ed25519PrivateKey.from_private_bytes(seed))

    @property
    def public(self) -> bytes:
        return self.private.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )

    @property
    def node_id(self) -> str:
        return wire.node_id_for(self.public)

    def sign(self, message: bytes) -> bytes:
        return self.private.sign(message)


@dataclass
class Node:
    key: Key
    shard: Shard
    sessions: SessionManager
    server: DataPlaneServer
    tracker_key: list[bytes | None] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.server.url


def build_tiny_llama(folder: Path) -> Path:
    save_tiny_llama(
        folder, layers=NUM_LAYERS, vocab=VOCAB, hidden=HIDDEN, max_positions=128, tie=True
    )
    (folder / "tokenizer.json").write_text('{"model": {"type": "tiny-test"}}', encoding="utf-8")
    return folder


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_llama(tmp_path_factory.mktemp("dataplane-tiny-llama"))


@pytest.fixture(scope="session")
def tracker_key() -> Key:
    return Key.from_seed(TRACKER_SEED)


def start_node(
    key: Key,
    shard: Shard,
    tracker: Key,
    *,
    tokenizer_path: Path | None = None,
    sessions: SessionManager | None = None,
    clock: Callable[[], float] = time.time,
    expire_interval_s: float = 5.0,
    open_timeout_s: float = 30.0,
) -> Node:
    holder: list[bytes | None] = [tracker.public]
    manager = sessions or SessionManager(shard)
    server = DataPlaneServer(
        manager,
        key.node_id,
        key.public,
        key.sign,
        lambda: holder[0],
        FINGERPRINT,
        (shard.start, shard.end),
        MAX_FRAME_BYTES,
        "127.0.0.1",
        0,
        clock,
        tokenizer_path=tokenizer_path,
        expire_interval_s=expire_interval_s,
        open_timeout_s=open_timeout_s,
    )
    server.start()
    return Node(key, shard, manager, server, holder)


@pytest.fixture(scope="module")
def nodes(tiny_model: Path, tracker_key: Key) -> Iterator[tuple[Node, Node]]:
    """Node A: layers [0, 2). Node B: layers [1, 4), started at 2 by tickets."""
    a = start_node(
        Key.from_seed(NODE_A_SEED),
        Shard.load(tiny_model, 0, 2),
        tracker_key,
        tokenizer_path=tiny_model / "tokenizer.json",
    )
    b = start_node(Key.from_seed(NODE_B_SEED), Shard.load(tiny_model, 1, 4), tracker_key)
    try:
        yield a, b
    finally:
        a.server.stop()
        b.server.stop()


def ticket_for(
    tracker: Key,
    hops: list[dict[str, Any]],
    *,
    expires_at: float | None = None,
    fingerprint: dict[str, str] | None = None,
    route_session_id: str = "route-1",
    epoch: int = 1,
) -> dict[str, Any]:
    ticket = {
        "route_session_id": route_session_id,
        "epoch": epoch,
        "expires_at": time.time() + 60.0 if expires_at is None else expires_at,
        "fingerprint": dict(FINGERPRINT if fingerprint is None else fingerprint),
        "hops": hops,
    }
    return sign_ticket(ticket, tracker.sign)


def route_hops(a: Node, b: Node) -> list[dict[str, Any]]:
    return [
        {"node_id": a.key.node_id, "start": 0, "end": 2, "effective_start": 0},
        {"node_id": b.key.node_id, "start": 1, "end": 4, "effective_start": 2},
    ]


async def wait_until(predicate: Callable[[], bool], timeout_s: float = 10.0) -> None:
    """The server frees a session just after it answers; wait for that, bounded."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not reached within {timeout_s} s")
        await asyncio.sleep(0.01)
