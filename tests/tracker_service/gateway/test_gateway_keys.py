"""API keys on a live gateway: issued and revoked with `meshnet-tracker keys`, refused
in OpenAI's shape (401), limited per key per minute (429 with Retry-After)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import openai
import pytest

from tests.support.waiting import wait_until
from tests.tracker_service.gateway_cluster import (
    MODEL,
    GatewayCluster,
    build_chat_model,
    certified_cluster,
)
from tracker_service.cli.commands import main

MESSAGES = [{"role": "user", "content": "the capital of france is"}]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayCluster]:
    model = build_chat_model(tmp_path_factory.mktemp("keys-tiny-chat"))
    with certified_cluster(tmp_path_factory.mktemp("keys-tracker"), model) as cluster:
        yield cluster


def db_url(cluster: GatewayCluster) -> str:
    return str(cluster.app.state.tracker.settings.database_url())


def add_key(cluster: GatewayCluster, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["keys", "add", "--db", db_url(cluster), *args]) == 0
    return capsys.readouterr().out.strip().splitlines()[-1]


def client(cluster: GatewayCluster, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=cluster.base_url, api_key=key, max_retries=0)


def keys_enforced(cluster: GatewayCluster) -> bool:
    reply = httpx.get(cluster.base_url + "/models", trust_env=False)
    return reply.status_code == 401


def test_keys_are_shown_once_stored_hashed_and_required_once_any_exists(
    cluster: GatewayCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    assert client(cluster, "anything").models.list().data  # no keys yet: loopback is open
    key = add_key(cluster, capsys, "--label", "alice")
    assert key.startswith("mnk_")
    assert main(["keys", "list", "--db", db_url(cluster)]) == 0
    listing = capsys.readouterr().out
    assert "alice" in listing and key not in listing
    wait_until(lambda: keys_enforced(cluster), 10, "the gateway to see the key")

    reply = httpx.post(
        cluster.base_url + "/chat/completions",
        json={"model": MODEL, "messages": MESSAGES},
        trust_env=False,
    )
    assert reply.status_code == 401
    assert reply.json()["error"]["code"] == "invalid_api_key"
    assert "Authorization: Bearer" in reply.json()["error"]["message"]
    with pytest.raises(openai.AuthenticationError):
        client(cluster, "mnk_not-a-key").chat.completions.create(model=MODEL, messages=MESSAGES)
    answer = client(cluster, key).chat.completions.create(
        model=MODEL, messages=MESSAGES, max_tokens=3, temperature=0
    )
    assert answer.usage is not None and answer.usage.completion_tokens >= 1

    assert main(["keys", "revoke", "1", "--db", db_url(cluster)]) == 0
    assert main(["keys", "revoke", "1", "--db", db_url(cluster)]) == 1
    with pytest.raises(openai.AuthenticationError) as caught:
        client(cluster, key).models.list()
    body = caught.value.body
    assert isinstance(body, dict) and "revoked" in body["message"]


def test_a_key_over_its_request_limit_gets_429_with_retry_after(
    cluster: GatewayCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    key = add_key(cluster, capsys, "--label", "bob", "--requests-per-minute", "2")
    wait_until(lambda: keys_enforced(cluster), 10, "the gateway to see the key")
    limited = client(cluster, key)
    limited.models.list()
    limited.models.list()
    with pytest.raises(openai.RateLimitError) as caught:
        limited.models.list()
    assert int(caught.value.response.headers["Retry-After"]) >= 1
    body = caught.value.body
    assert isinstance(body, dict) and body["code"] == "rate_limit_exceeded"


def test_a_key_over_its_token_limit_gets_429(
    cluster: GatewayCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    key = add_key(cluster, capsys, "--label", "carol", "--tokens-per-minute", "5")
    wait_until(lambda: keys_enforced(cluster), 10, "the gateway to see the key")
    limited = client(cluster, key)
    limited.chat.completions.create(model=MODEL, messages=MESSAGES, max_tokens=4)
    with pytest.raises(openai.RateLimitError, match="tokens"):
        limited.chat.completions.create(model=MODEL, messages=MESSAGES, max_tokens=4)
