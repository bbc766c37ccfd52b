"""A real tracker (uvicorn on loopback, in a thread) and real in-process node data
planes on a tiny random Llama with a word-level tokenizer and a chat template,
for the gateway's tests. The official ``openai`` client talks to it unchanged.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import openai
import uvicorn
from fastapi import FastAPI

from core.recipes.recipe_identity import build_identity_block
from tests.support.waiting import wait_until
from tests.tiny_llama import save_tiny_llama
from tests.tracker_service.conftest import make_settings, register
from tests.tracker_service.helpers import FakeNode, recipe_axes
from tests.tracker_service.real_nodes import RealNode, sha256_file, start_real_node
from tracker_service.app import create_app

LAYERS = 4
VOCAB = 256
MODEL = "tests/tiny-chat"
SPECIAL = ["[UNK]", "<s>", "</s>"]
WORDS = ["the", "capital", "of", "france", "is", "paris", "system", "user", "assistant", ":"]
TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }} : {{ m['content'] }} {% endfor %}"
    "{% if add_generation_prompt %}assistant :{% endif %}"
)


def build_chat_model(folder: Path) -> Path:
    """A 4-layer random Llama; every id of its 256-token vocabulary is a word."""
    from tokenizers import AddedToken, Tokenizer, normalizers, pre_tokenizers
    from tokenizers.models import WordLevel

    save_tiny_llama(folder, layers=LAYERS, vocab=VOCAB, hidden=64, max_positions=128, tie=True)
    words = SPECIAL + WORDS
    words += [f"w{i}" for i in range(VOCAB - len(words))]
    tokenizer = Tokenizer(WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.add_special_tokens([AddedToken(t, special=True) for t in SPECIAL])
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"chat_template": TEMPLATE, "eos_token": "</s>", "bos_token": "<s>"})
    )
    return folder


def identity(
    model_dir: Path, start: int, end: int, *, artifact: str = MODEL, content: str | None = None
) -> dict[str, Any]:
    """The identity block of [start, end); another `content` digest is another model."""
    fields = recipe_axes(
        tokenizer_revision=sha256_file(model_dir / "tokenizer.json"), recipe_id="tiny-chat-fp32"
    )
    return build_identity_block(
        artifact_id=artifact,
        revision="0123456789abcdef0123456789abcdef01234567",
        content_digest=content or sha256_file(model_dir / "model.safetensors"),
        architecture="LlamaForCausalLM",
        architecture_digest=sha256_file(model_dir / "config.json"),
        layer_count=LAYERS,
        recipe_fields=fields,
        shard_start=start,
        shard_end=end,
    )


def greedy_ids(model_dir: Path, prompt: Sequence[int], max_new: int) -> list[int]:
    """transformers' greedy answer (stops at the config's end-of-sequence id)."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    with torch.inference_mode():
        out = model.generate(
            torch.tensor([list(prompt)]),
            max_new_tokens=max_new,
            do_sample=False,
            attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
            pad_token_id=0,
        )
    return [int(t) for t in out[0, len(prompt) :]]


@dataclass
class GatewayCluster:
    app: FastAPI
    url: str
    model_dir: Path
    server: uvicorn.Server
    thread: threading.Thread
    nodes: list[RealNode] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def http(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60, trust_env=False)

    def join(self, node: RealNode) -> None:
        with self.http() as client:
            response = register(client, node.as_fake_node(), node.identity)
        assert response.status_code == 200, response.text
        node.tracker_key[0] = base64.b64decode(response.json()["tracker_public_key"])
        self.nodes.append(node)

    def add_node(self, start: int, end: int, **kw: Any) -> RealNode:
        node = start_real_node(
            self.model_dir, start, end, identity=identity(self.model_dir, start, end), **kw
        )
        self.join(node)
        return node

    def recipes(self) -> list[dict[str, Any]]:
        with self.http() as client:
            return list(client.get("/api/v1/state").json()["recipes"])

    def wait_certified(self, artifact: str = MODEL) -> None:
        wait_until(
            lambda: any(
                r["status"] == "certified" and r["artifact_id"] == artifact for r in self.recipes()
            ),
            what=f"{artifact} to be certified",
        )

    def open_sessions(self) -> int:
        return sum(n.sessions.open_count for n in self.nodes if n.server is not None)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
        self.server.should_exit = True
        self.thread.join(timeout=15)
        self.app.state.tracker.database.dispose()


def start_cluster(tmp_path: Path, model_dir: Path, **settings: Any) -> GatewayCluster:
    values: dict[str, Any] = {
        "reachability_poll_s": 0.05,
        "certifier_poll_s": 0.2,
        "certifier_backoff_s": 1.0,
        # In-process nodes send no heartbeats; a long interval keeps them live.
        "heartbeat_interval_s": 3600.0,
        "gateway_step_timeout_s": 10.0,
    }
    values.update(settings)
    app = create_app(make_settings(tmp_path, **values))
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_until(lambda: server.started, 30, "the tracker to start")
    port = server.servers[0].sockets[0].getsockname()[1]
    return GatewayCluster(app, f"http://127.0.0.1:{port}", model_dir, server, thread)


@contextmanager
def certified_cluster(tmp_path: Path, model_dir: Path, **settings: Any) -> Iterator[GatewayCluster]:
    """A tracker whose nodes on layers 0-2 and 2-4 have their recipe certified; stopped after."""
    cluster = start_cluster(tmp_path, model_dir, **settings)
    try:
        cluster.add_node(0, 2)
        cluster.add_node(2, 4)
        cluster.wait_certified()
        yield cluster
    finally:
        cluster.stop()


STEP_DELAY_S = 0.03  # slows a node's steps so a kill or a departure lands mid-stream


def slow(node: RealNode) -> RealNode:
    run_layers = node.shard.run_layers

    def delayed(*args: Any, **kwargs: Any) -> Any:
        time.sleep(STEP_DELAY_S)
        return run_layers(*args, **kwargs)

    node.shard.run_layers = delayed  # type: ignore[method-assign]
    return node


def client(cluster: GatewayCluster) -> openai.OpenAI:
    return openai.OpenAI(base_url=cluster.base_url, api_key="unused", max_retries=0)


def failovers(cluster: GatewayCluster) -> float:
    with cluster.http() as http:
        for line in http.get("/metrics").text.splitlines():
            if line.startswith("meshnet_gateway_failovers_total"):
                return float(line.split()[-1])
    return 0.0


def stream_completion(
    cluster: GatewayCluster,
    prompt: list[int],
    new_tokens: int,
    on_chunk: Callable[[int], None] | None = None,
) -> str:
    """A streamed greedy completion's text; ``on_chunk(i)`` runs after chunk i arrived."""
    chunks = client(cluster).completions.create(
        model=MODEL, prompt=prompt, max_tokens=new_tokens, temperature=0, stream=True
    )
    parts: list[str] = []
    for index, chunk in enumerate(chunks):
        parts.append(chunk.choices[0].text if chunk.choices else "")
        if on_chunk is not None:
            on_chunk(index)
    return "".join(parts)


def announce_departure(
    cluster: GatewayCluster,
    signer: FakeNode,
    path_node: str | None = None,
    header_node: str | None = None,
) -> httpx.Response:
    """A node's signed deregister (what core/network/tracker_client.py sends when it leaves), by
    ``signer``; ``path_node``/``header_node`` put another node's id in the path or the
    signed header (what a forger tries)."""
    path = f"/api/v1/nodes/{path_node or signer.node_id}/deregister"
    body = b'{"load":0,"open_sessions":0,"tokens_served":0}'
    headers = signer.headers("POST", path, body)
    if header_node is not None:
        headers["X-Meshnet-Node"] = header_node
    with cluster.http() as http:
        return http.post(path, content=body, headers=headers)
