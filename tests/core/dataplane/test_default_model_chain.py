"""The real default model (SmolLM2-135M, 30 layers) split over two shard servers
generates what the same split generates in one process."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
import torch

from core.dataplane import frames
from core.dataplane.receipts import verify_receipt
from core.dataplane.server import DataPlaneServer
from core.models.tokenizer import ChatTokenizer
from core.runtime.generate import generate_local
from core.runtime.sessions import SessionManager
from core.runtime.shard import Shard
from tests.core.dataplane.conftest import (
    FINGERPRINT,
    NODE_A_SEED,
    NODE_B_SEED,
    Key,
    ticket_for,
)
from tests.support.hop_client import HopClient

pytestmark = pytest.mark.slow
NEW_TOKENS = 8


def _server(key: Key, shard: Shard, tracker: Key, tokenizer: Path | None) -> DataPlaneServer:
    return DataPlaneServer(
        SessionManager(shard),
        key.node_id,
        key.public,
        key.sign,
        lambda: tracker.public,
        FINGERPRINT,
        (shard.start, shard.end),
        frames.step_frame_limit(shard.config.hidden_size, 256),
        tokenizer_path=tokenizer,
    )


def test_default_model_over_two_servers_matches_local_generation(
    default_model_dir: Path, tracker_key: Key
) -> None:
    head, tail = Shard.load(default_model_dir, 0, 16), Shard.load(default_model_dir, 12, 30)
    a_key, b_key = Key.from_seed(NODE_A_SEED), Key.from_seed(NODE_B_SEED)
    tokenizer_file = default_model_dir / "tokenizer.json"
    prompt = ChatTokenizer.from_folder(default_model_dir).encode("The capital of France is")
    hops = [
        {"node_id": a_key.node_id, "start": 0, "end": 16, "effective_start": 0},
        {"node_id": b_key.node_id, "start": 12, "end": 30, "effective_start": 16},
    ]

    async def remote() -> tuple[list[int], list[dict[str, object]], bytes]:
        async with (
            _server(a_key, head, tracker_key, tokenizer_file) as a,
            _server(b_key, tail, tracker_key, None) as b,
        ):
            async with httpx.AsyncClient() as http:
                served = (await http.get(f"{a.http_url}/v1/tokenizer")).content
            ticket = ticket_for(tracker_key, hops)
            tokens: list[int] = []
            async with HopClient(a.url) as hop_a, HopClient(b.url) as hop_b:
                await hop_a.open(ticket, len(prompt) + NEW_TOKENS)
                await hop_b.open(ticket, len(prompt) + NEW_TOKENS, {"temperature": 0.0})
                x, position = torch.tensor([prompt]), 0
                for _ in range(NEW_TOKENS):
                    hidden = (await hop_a.step({"input_ids": x}, position)).tensors["hidden"]
                    reply = await hop_b.step({"hidden": hidden}, position)
                    position += x.shape[1]
                    tokens.append(int(reply.tensors["token_ids"][0]))
                    x = torch.tensor([[tokens[-1]]])
                receipts = [await hop_a.close(), await hop_b.close()]
        return tokens, receipts, served

    tokens, receipts, served = asyncio.run(remote())
    local = list(generate_local([head, Shard.load(default_model_dir, 16, 30)], prompt, NEW_TOKENS))
    assert tokens == local
    assert served == tokenizer_file.read_bytes()
    assert verify_receipt(receipts[1], b_key.public).tokens == len(prompt) + NEW_TOKENS - 1
