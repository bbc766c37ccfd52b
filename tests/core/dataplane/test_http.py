"""The plain HTTP GETs on the data-plane port: challenge, health, tokenizer, config."""

from __future__ import annotations

import hashlib
from pathlib import Path

import httpx
import pytest

from core.dataplane import wire
from core.dataplane.challenge import verify_challenge
from tests.core.dataplane.conftest import Node


def test_challenge_answer_verifies_for_the_nonce_asked(nodes: tuple[Node, Node]) -> None:
    a, _ = nodes
    nonce = "0123456789abcdef" * 2
    response = httpx.get(f"{a.server.http_url}/v1/challenge", params={"nonce": nonce})
    assert response.status_code == 200
    answer = response.json()
    assert verify_challenge(answer, nonce, a.key.node_id) == a.key.public
    assert answer["public_key"] == wire.b64encode(a.key.public)


@pytest.mark.parametrize("query", ["", "?nonce=", "?nonce=xyz", "?nonce=" + "ab" * 300])
def test_challenge_without_a_bounded_hex_nonce_is_400_with_a_reason(
    nodes: tuple[Node, Node], query: str
) -> None:
    a, _ = nodes
    response = httpx.get(f"{a.server.http_url}/v1/challenge{query}")
    assert response.status_code == 400
    assert response.json()["reason"] == wire.BAD_FRAME


def test_health_reports_node_range_open_sessions_and_kv_per_token(
    nodes: tuple[Node, Node],
) -> None:
    _, b = nodes
    body = httpx.get(f"{b.server.http_url}/v1/health").json()
    assert body == {
        "node_id": b.key.node_id,
        "range": [1, 4],
        "open_sessions": 0,
        "tokens_served": b.server.tokens_served,
        "kv_bytes_per_token": b.shard.kv_bytes_per_token(),
        "kv_budget_bytes": None,
        "kv_reserved_bytes": 0,
        "decode_forwards": b.server.batch_stats.forwards,
        "decode_rows": b.server.batch_stats.rows,
        "prefix_cache": None,  # no budget given, so no cache
    }


def test_tokenizer_is_served_byte_for_byte_with_its_sha256(
    nodes: tuple[Node, Node], tiny_model: Path
) -> None:
    a, _ = nodes
    response = httpx.get(f"{a.server.http_url}/v1/tokenizer")
    expected = (tiny_model / "tokenizer.json").read_bytes()
    assert response.status_code == 200 and response.content == expected
    assert response.headers["X-Meshnet-Sha256"] == hashlib.sha256(expected).hexdigest()


def test_config_is_served_byte_for_byte_beside_the_tokenizer(
    nodes: tuple[Node, Node], tiny_model: Path
) -> None:
    a, b = nodes
    response = httpx.get(f"{a.server.http_url}/v1/config")
    expected = (tiny_model / "config.json").read_bytes()
    assert response.status_code == 200 and response.content == expected
    assert response.headers["X-Meshnet-Sha256"] == hashlib.sha256(expected).hexdigest()
    assert httpx.get(f"{b.server.http_url}/v1/config").status_code == 404  # no tokenizer folder


def test_node_without_a_tokenizer_and_unknown_paths_answer_404(nodes: tuple[Node, Node]) -> None:
    a, b = nodes
    assert httpx.get(f"{b.server.http_url}/v1/tokenizer").status_code == 404
    response = httpx.get(f"{a.server.http_url}/admin")
    assert response.status_code == 404 and response.json()["reason"] == "not-found"


def test_plain_get_on_the_session_path_is_refused_not_crashed(nodes: tuple[Node, Node]) -> None:
    a, _ = nodes
    assert httpx.get(f"{a.server.http_url}/v1/session").status_code == 426
    assert httpx.get(f"{a.server.http_url}/v1/health").status_code == 200
