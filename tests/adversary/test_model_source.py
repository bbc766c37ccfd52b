"""Attack 9 of issue 35: one model name, one operator-approved source.

Two colluding identities register real nodes that claim other weights (another
artifact digest) under a model name the operator serves, and certify that fake
recipe with a real distributed forward. On a public tracker (no trust-first) the
gateway must not serve it: chats are refused with a reason, ``/v1/models`` does
not list it and the status page shows it unserved. Only the operator's
``meshnet-tracker models allow`` makes it serve.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.waiting import wait_until
from tests.tracker_service.gateway_cluster import (
    MODEL,
    GatewayCluster,
    build_chat_model,
    certified_cluster,
    identity,
    start_cluster,
)
from tests.tracker_service.real_nodes import start_real_node
from tracker_service.cli.commands import main as tracker_cli
from tracker_service.domain.recipe_identity import parse_identity

FAKE_CONTENT = "e" * 64  # the weights the colluders claim: not the model's


@pytest.fixture(scope="module")
def chat_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_chat_model(tmp_path_factory.mktemp("model-source-tiny-chat"))


@pytest.fixture
def cluster(chat_model: Path, tmp_path: Path) -> Iterator[GatewayCluster]:
    honest = parse_identity(identity(chat_model, 0, 2)).model_artifact_digest
    # A public tracker: it serves MODEL from the real weights only (the operator said so).
    cluster = start_cluster(
        tmp_path,
        chat_model,
        trust_first_model_source=False,
        allowed_model_sources=f"{MODEL}={honest}",
    )
    try:
        yield cluster
    finally:
        cluster.stop()


def chat(client: httpx.Client) -> httpx.Response:
    body = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "the capital of france is"}],
        "max_tokens": 4,
        "temperature": 0,
    }
    return client.post("/v1/chat/completions", json=body)


def test_a_fake_certified_under_a_known_name_is_not_served_until_the_operator_allows_it(
    cluster: GatewayCluster, chat_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    colluders = []
    for start, end in ((0, 2), (2, 4)):
        fake = identity(chat_model, start, end, content=FAKE_CONTENT)
        node = start_real_node(chat_model, start, end, identity=fake)
        cluster.join(node)
        colluders.append(node)
    cluster.wait_certified()
    [recipe] = cluster.recipes()
    fake_digest = recipe["model_artifact_digest"]
    assert recipe["status"] == "certified" and recipe["artifact_id"] == MODEL

    with cluster.http() as client:
        refused = chat(client)
        assert refused.status_code == 503, refused.text
        error = refused.json()["error"]
        assert error["code"] == "model_source_not_allowed"
        assert "models allow" in error["message"]
        assert client.get("/v1/models").json()["data"] == []
        assert client.get("/api/v1/state").json()["recipes"][0]["source"] == "unapproved"
        page = client.get("/").text
        assert "unserved" in page and fake_digest[:12] in page

        # The operator looks at the weights and allows them: now they serve.
        db = cluster.app.state.tracker.settings.database_url()
        assert tracker_cli(["models", "allow", MODEL, fake_digest[:12], "--db", db]) == 0
        served = chat(client)
        assert served.status_code == 200, served.text
        assert served.json()["choices"][0]["message"]["content"]
        assert [m["id"] for m in client.get("/v1/models").json()["data"]] == [MODEL]
        assert client.get("/api/v1/state").json()["recipes"][0]["source"] == "allowed"
        capsys.readouterr()
        assert tracker_cli(["models", "--db", db]) == 0
        listed = capsys.readouterr().out
        row = next(line.split() for line in listed.splitlines() if fake_digest[:12] in line)
        assert row[:5] == [MODEL, fake_digest[:12], "allowed", "yes", "serving"], listed

        # And a deny takes it away again.
        assert tracker_cli(["models", "deny", MODEL, fake_digest[:12], "--db", db]) == 0
        assert chat(client).status_code == 503
    assert sum(n.sessions.open_count for n in colluders) == 0


def test_trust_first_serves_the_first_source_and_keeps_a_later_one_unserved(
    chat_model: Path, tmp_path: Path
) -> None:
    """A private network's operator (``serve --trust-first-model-source``): the first
    certified source serves with no extra step; another one under the name does not."""
    with certified_cluster(tmp_path, chat_model, trust_first_model_source=True) as cluster:
        with cluster.http() as client:
            assert chat(client).status_code == 200
        for start, end in ((0, 2), (2, 4)):
            fake = identity(chat_model, start, end, content=FAKE_CONTENT)
            cluster.join(start_real_node(chat_model, start, end, identity=fake))
        with cluster.http() as client:

            def sources() -> list[str]:
                recipes = client.get("/api/v1/state").json()["recipes"]
                return sorted(f"{r['status']}/{r['source']}" for r in recipes)

            wait_until(lambda: sources() == ["certified/allowed", "certified/unapproved"])
            assert chat(client).status_code == 200  # from the first source only
