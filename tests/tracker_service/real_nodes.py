"""Real node data planes for the tracker's route-client and certifier tests.

A tiny random Llama (transformers ``LlamaConfig`` + ``save_pretrained``) with a
real word-level ``tokenizer.json``; each node is ``core.runtime.Shard`` behind
``core.dataplane.DataPlaneServer`` on loopback, with its own Ed25519 key and the
identity block ``core.recipes.recipe_identity`` builds for its range. Tests may import core to
stand up real nodes; ``tracker_service`` itself never does.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from core.dataplane.server import DataPlaneServer
from core.dataplane.tls import generate_certificate
from core.recipes.recipe_identity import build_identity_block
from core.runtime.sessions import SessionManager
from core.runtime.shard import Shard
from tests.tiny_llama import save_tiny_llama
from tests.tracker_service.helpers import FakeNode, recipe_axes

NUM_LAYERS = 4
HIDDEN = 64
VOCAB = 256
MAX_FRAME_BYTES = 1024 * 1024
WORDS = ["[UNK]", "the", "capital", "of", "france", "is", "paris", "a", "city", "and"]


def build_tiny_model(folder: Path) -> Path:
    """A 4-layer random Llama and a word-level tokenizer whose ids fit its vocabulary."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers
    from tokenizers.models import WordLevel

    save_tiny_llama(
        folder, layers=NUM_LAYERS, vocab=VOCAB, hidden=HIDDEN, max_positions=128, tie=True
    )
    tokenizer = Tokenizer(WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(folder / "tokenizer.json"))
    return folder


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def identity_for(
    model_dir: Path, start: int, end: int, layer_count: int = NUM_LAYERS, **axes: Any
) -> dict[str, Any]:
    """The identity block a node serving [start, end) of the tiny model (or, with
    its ``layer_count``, another local model folder) presents."""
    fields = recipe_axes(
        tokenizer_revision=sha256_file(model_dir / "tokenizer.json"),
        recipe_id="tiny-llama-fp32",
        **axes,
    )
    return build_identity_block(
        artifact_id="tests/tiny-llama",
        revision="0123456789abcdef0123456789abcdef01234567",
        content_digest=sha256_file(model_dir / "model.safetensors"),
        architecture="LlamaForCausalLM",
        architecture_digest=sha256_file(model_dir / "config.json"),
        layer_count=layer_count,
        recipe_fields=fields,
        shard_start=start,
        shard_end=end,
    )


@dataclass
class RealNode:
    key: Ed25519PrivateKey
    shard: Shard
    sessions: SessionManager
    server: DataPlaneServer
    identity: dict[str, Any]
    tracker_key: list[bytes | None] = field(default_factory=lambda: [None])

    @property
    def public_key(self) -> bytes:
        return self.key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )

    @property
    def node_id(self) -> str:
        return hashlib.sha256(self.public_key).hexdigest()[:32]

    @property
    def endpoint(self) -> str:
        return self.server.url

    @property
    def fingerprint(self) -> tuple[str, str]:
        claim = self.identity["fingerprint"]
        return claim["model_artifact_digest"], claim["runtime_recipe_digest"]

    def as_fake_node(self) -> FakeNode:
        """The test-side signer of registration requests, with this node's key."""
        return FakeNode(key=self.key, endpoint=self.endpoint)

    def stop(self) -> None:
        self.server.stop()


def start_real_node(
    model_dir: Path,
    start: int,
    end: int,
    *,
    tracker_public_key: bytes | None = None,
    kv_budget_bytes: int | None = None,
    serve_tokenizer: bool = True,
    identity: dict[str, Any] | None = None,
    key: Ed25519PrivateKey | None = None,
    tls: bool = False,
) -> RealNode:
    """``tls``: serve wss:// with a fresh certificate (its pin: ``node.server.tls.pin``)."""
    key = key or Ed25519PrivateKey.generate()
    shard = Shard.load(model_dir, start, end)
    sessions = SessionManager(shard, kv_budget_bytes=kv_budget_bytes)
    identity = identity or identity_for(model_dir, start, end)
    holder: list[bytes | None] = [tracker_public_key]
    public = key.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    server = DataPlaneServer(
        sessions,
        hashlib.sha256(public).hexdigest()[:32],
        public,
        key.sign,
        lambda: holder[0],
        identity["fingerprint"],
        (start, end),
        MAX_FRAME_BYTES,
        "127.0.0.1",
        0,
        tokenizer_path=model_dir / "tokenizer.json" if serve_tokenizer else None,
        tls=generate_certificate(hashlib.sha256(public).hexdigest()[:32]) if tls else None,
    )
    server.start()
    return RealNode(key, shard, sessions, server, identity, holder)


def assert_sessions_freed(*nodes: RealNode, within_s: float = 10.0) -> None:
    """A route that failed or was left drops its connections without a close, and a
    node frees such a session when it sees the connection end: wait for it, bounded."""
    deadline = time.monotonic() + within_s
    while any(n.sessions.open_count for n in nodes) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [n.sessions.open_count for n in nodes] == [0] * len(nodes)
