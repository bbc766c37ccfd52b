"""Chats through a live gateway with an API key, for the credit attacks and
benchmarks/credit_abuse.py (tests/tracker_service/gateway_cluster.py's tiny model)."""

from __future__ import annotations

import concurrent.futures
from typing import Any

import httpx

from tests.support.waiting import wait_until
from tests.tracker_service.gateway_cluster import MODEL, GatewayCluster

MESSAGES = [{"role": "user", "content": "the capital of france is"}]


def keys_enforced(cluster: GatewayCluster) -> None:
    """Wait until the gateway has seen that keys exist (it re-reads that every 2 s)."""
    wait_until(
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
