"""The chat template is taken only with verified bytes: the certifier pins the digest
every certifying node served, and a node serving another template is never used."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import openai
import pytest
from sqlalchemy import select
from tokenizers import Tokenizer

from tests.support.waiting import wait_until
from tests.tracker_service.gateway_cluster import (
    MODEL,
    GatewayCluster,
    build_chat_model,
    certified_cluster,
    greedy_ids,
    identity,
    start_cluster,
)
from tests.tracker_service.real_nodes import RealNode, start_real_node
from tracker_service.store.tables import Recipe

QUESTION = "the capital of france is"
EVIL = "{{ messages[0]['content'] }} paris paris paris"


@pytest.fixture(scope="module")
def chat_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_chat_model(tmp_path_factory.mktemp("template-tiny-chat"))


@pytest.fixture(scope="module")
def tampered_model(chat_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same weights and tokenizer (same fingerprint), another chat template."""
    folder = tmp_path_factory.mktemp("template-tampered") / "model"
    shutil.copytree(chat_model, folder)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config["chat_template"] = EVIL
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    return folder


def pinned(cluster: GatewayCluster) -> str | None:
    with cluster.app.state.tracker.database.session() as session:
        row = session.execute(select(Recipe).where(Recipe.artifact_id == MODEL)).scalar_one()
        return row.chat_template_sha256


def genuine_digest(model_dir: Path) -> str:
    return hashlib.sha256((model_dir / "tokenizer_config.json").read_bytes()).hexdigest()


def add(cluster: GatewayCluster, model_dir: Path, start: int, end: int) -> RealNode:
    node = start_real_node(model_dir, start, end, identity=identity(model_dir, start, end))
    cluster.join(node)
    return node


def chat(cluster: GatewayCluster) -> str:
    client = openai.OpenAI(base_url=cluster.base_url, api_key="unused", max_retries=0)
    reply = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": QUESTION}], max_tokens=8, temperature=0
    )
    return str(reply.choices[0].message.content)


def genuine_answer(model_dir: Path) -> str:
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    prompt = tokenizer.encode(f"user : {QUESTION} assistant :", add_special_tokens=False).ids
    ids = greedy_ids(model_dir, prompt, 8)
    return str(tokenizer.decode(ids[: ids.index(2)] if 2 in ids else ids))


def test_certification_pins_the_template_every_certifying_node_served(
    chat_model: Path, tmp_path: Path
) -> None:
    with certified_cluster(tmp_path, chat_model) as cluster:
        wait_until(lambda: pinned(cluster) is not None, 30, "the template pin")
        assert pinned(cluster) == genuine_digest(chat_model)


def test_a_node_serving_another_template_is_never_used(
    chat_model: Path, tampered_model: Path, tmp_path: Path
) -> None:
    cluster = start_cluster(tmp_path, chat_model)
    try:
        add(cluster, chat_model, 0, 2)
        add(cluster, tampered_model, 2, 4)
        add(cluster, chat_model, 2, 4)
        cluster.wait_certified()
        expected = genuine_answer(chat_model)
        for _ in range(3):  # whichever second-half node serves, the genuine template rules
            assert chat(cluster) == expected
        assert pinned(cluster) == genuine_digest(chat_model)
    finally:
        cluster.stop()


def test_without_two_nodes_agreeing_chat_is_refused_and_completions_still_work(
    chat_model: Path, tampered_model: Path, tmp_path: Path
) -> None:
    cluster = start_cluster(tmp_path, chat_model)
    try:
        add(cluster, chat_model, 0, 2)
        add(cluster, tampered_model, 2, 4)
        cluster.wait_certified()
        with pytest.raises(openai.APIStatusError) as caught:
            chat(cluster)
        assert caught.value.status_code == 503
        body = caught.value.body
        assert isinstance(body, dict) and body["code"] == "chat_template_unverified"
        assert pinned(cluster) is None
        client = openai.OpenAI(base_url=cluster.base_url, api_key="unused", max_retries=0)
        assert client.completions.create(model=MODEL, prompt=QUESTION, max_tokens=3).choices
    finally:
        cluster.stop()
