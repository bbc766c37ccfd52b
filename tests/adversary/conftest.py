"""A live tracker with a priority gate and two real in-process nodes of a tiny chat model,
for the credit attacks that go through the gateway (tests/tracker_service/gateway_cluster.py)."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

# The real tracker app behind a TestClient, as the tracker's own tests use it.
from tests.tracker_service.conftest import client as client
from tests.tracker_service.conftest import settings as settings
from tests.tracker_service.gateway_cluster import (
    MODEL,
    GatewayCluster,
    build_chat_model,
    start_cluster,
    wait_for,
)

MESSAGES = [{"role": "user", "content": "the capital of france is"}]


@pytest.fixture(scope="module")
def credit_cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GatewayCluster]:
    """A module's own cluster; a module's ``CLUSTER_SETTINGS`` dict adds settings."""
    model = build_chat_model(tmp_path_factory.mktemp("credit-tiny-chat"))
    # A cap on generations turns the priority gate on: credit then buys a place in line.
    settings: dict[str, Any] = {"gateway_max_concurrent": 4}
    settings.update(getattr(request.module, "CLUSTER_SETTINGS", {}))
    cluster = start_cluster(tmp_path_factory.mktemp("credit-tracker"), model, **settings)
    try:
        cluster.add_node(0, 2)
        cluster.add_node(2, 4)
        cluster.wait_certified()
        yield cluster
    finally:
        cluster.stop()


def keys_enforced(cluster: GatewayCluster) -> None:
    """Wait until the gateway has seen that keys exist (it re-reads that every 2 s)."""
    wait_for(
        lambda: httpx.get(cluster.base_url + "/models", trust_env=False).status_code == 401,
        10,
        "the gateway to require keys",
    )


def chat(cluster: GatewayCluster, key: str, max_tokens: int = 4) -> dict[str, Any]:
    reply = httpx.post(
        cluster.base_url + "/chat/completions",
        json={"model": MODEL, "messages": MESSAGES, "max_tokens": max_tokens, "temperature": 0},
        headers={"Authorization": f"Bearer {key}"},
        timeout=60,
        trust_env=False,
    )
    assert reply.status_code == 200, reply.text
    found: dict[str, Any] = reply.json()
    return found


def chats_at_once(
    cluster: GatewayCluster, key: str, count: int, max_tokens: int
) -> list[dict[str, Any]]:
    with concurrent.futures.ThreadPoolExecutor(count) as pool:
        return list(pool.map(lambda _: chat(cluster, key, max_tokens), range(count)))
