"""GET /api/v1/credits, /api/v1/credits/{id} and POST /api/v1/credits/accounts."""

from __future__ import annotations

import time

from fastapi.testclient import TestClient

from tests.support.credit_claims import claim_body
from tests.tracker_service.conftest import register
from tests.tracker_service.helpers import FakeNode, identity_block
from tracker_service.domain.credit_rules import bucket_of, hop_credit
from tracker_service.store import credits as ledger
from tracker_service.store.api_keys import add_api_key


def test_linked_identities_sum_per_account_and_team_and_pages(client: TestClient) -> None:
    a, b, c = FakeNode(), FakeNode(), FakeNode(endpoint="ws://127.0.0.1:9003")
    for node, (start, end) in ((a, (0, 10)), (b, (10, 30)), (c, (0, 30))):
        assert register(client, node, identity_block(start, end)).status_code == 200
    database = client.app.state.tracker.database  # type: ignore[attr-defined]
    now = time.time()
    ledger.add_credit(
        database,
        [
            ledger.CreditRow(a.node_id, bucket_of(now), credit=hop_credit(100, 10), hops=1),
            ledger.CreditRow(b.node_id, bucket_of(now), credit=hop_credit(100, 20), hops=1),
            ledger.CreditRow(c.node_id, bucket_of(now), credit=hop_credit(10, 30), hops=1),
        ],
    )
    with database.sessions.begin() as session:
        _, api_key = add_api_key(session, label="ada", now=now)
    reply = client.post(
        "/api/v1/credits/accounts",
        json=claim_body([a, b], "ada", team="analytical", api_key=api_key),
        headers={"Authorization": f"Bearer {api_key}"},
    )
    assert reply.status_code == 200, reply.text
    assert reply.json()["node_ids"] == sorted([a.node_id, b.node_id])
    assert reply.json()["api_key_linked"] is True

    board = client.get("/api/v1/credits").json()
    assert board["total_rows"] == 2
    top = board["rows"][0]
    assert (top["id"], top["kind"], top["team"]) == ("ada", "account", "analytical")
    assert top["total"] == round(hop_credit(100, 10) + hop_credit(100, 20), 6)
    assert top["last_24h"] == top["total"] and top["last_7d"] == top["total"]
    assert board["rows"][1]["id"] == c.node_id and board["rows"][1]["kind"] == "identity"

    page = client.get("/api/v1/credits", params={"kind": "identity", "offset": 1, "limit": 1})
    assert page.json()["total_rows"] == 3 and len(page.json()["rows"]) == 1
    teams = client.get("/api/v1/credits", params={"kind": "team"}).json()
    assert [r["id"] for r in teams["rows"]] == ["analytical"]

    detail = client.get("/api/v1/credits/ada").json()
    assert {i["node_id"] for i in detail["identities"]} == {a.node_id, b.node_id}


def test_refusals_have_the_documented_shape(client: TestClient) -> None:
    node, stranger = FakeNode(), FakeNode()
    assert register(client, node).status_code == 200
    missing = client.get("/api/v1/credits/nobody")
    assert missing.status_code == 404 and missing.json()["reason"] == "unknown-credit-id"
    assert client.get("/api/v1/credits", params={"kind": "planet"}).status_code == 422

    forged = claim_body([node], "ada")
    forged["signatures"] = {
        node.node_id: claim_body([stranger], "ada")["signatures"][stranger.node_id]
    }
    reply = client.post("/api/v1/credits/accounts", json=forged)
    assert reply.status_code == 401 and reply.json()["reason"] == "bad-signature"

    unknown = client.post("/api/v1/credits/accounts", json=claim_body([stranger], "ada"))
    assert unknown.status_code == 404 and unknown.json()["reason"] == "unknown-node"

    assert (
        client.post("/api/v1/credits/accounts", json=claim_body([node], "ada")).status_code == 200
    )
    other = FakeNode(endpoint="ws://127.0.0.1:9002")
    assert register(client, other).status_code == 200
    takeover = client.post("/api/v1/credits/accounts", json=claim_body([other], "ada"))
    assert takeover.status_code == 403 and takeover.json()["reason"] == "not-a-member"

    bad_key = client.post(
        "/api/v1/credits/accounts",
        json=claim_body([node], "ada"),
        headers={"Authorization": "Bearer mnk_wrong"},
    )
    assert bad_key.status_code == 401 and bad_key.json()["reason"] == "invalid-api-key"


def test_the_status_page_shows_the_leaderboard_as_text(client: TestClient) -> None:
    empty = client.get("/")
    assert "No credit yet" in empty.text and '<script src="/static/credits.js" defer>' in empty.text
    node = FakeNode()
    assert register(client, node).status_code == 200
    database = client.app.state.tracker.database  # type: ignore[attr-defined]
    ledger.add_credit(
        database, [ledger.CreditRow(node.node_id, bucket_of(time.time()), credit=2.5)]
    )
    body = claim_body([node], "grace", team="<b>cobol</b>")
    assert client.post("/api/v1/credits/accounts", json=body).status_code == 200
    page = client.get("/").text
    assert "Grace <code>grace</code>" in page and "2.500" in page
    assert "&lt;b&gt;cobol&lt;/b&gt;" in page and "<b>cobol</b>" not in page
    assert client.get("/static/credits.js").status_code == 200
