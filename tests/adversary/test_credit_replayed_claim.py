"""A signed account statement seen in transit (a proxy's log, a shared screen) is
re-posted within its 300 s window with the attacker's own API key: the statement names
the key it authorises, so the attacker's key is never linked to the victim's credit."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.support.credit_claims import claim_body, give_credit, new_api_key, post_claim
from tests.tracker_service.conftest import register
from tests.tracker_service.helpers import FakeNode
from tracker_service.store.api_keys import find_api_key


def test_a_claim_re_posted_with_another_key_links_nothing(client: TestClient) -> None:
    app = client.app
    database = app.state.tracker.database  # type: ignore[attr-defined]
    victim = FakeNode()
    assert register(client, victim).status_code == 200
    give_credit(database, victim.node_id, 5.0)
    own_key, thief_key = new_api_key(database, "victim"), new_api_key(database, "thief")

    body = claim_body([victim], "victim", api_key=own_key)
    assert post_claim(client, body, own_key).status_code == 200

    replayed = post_claim(client, body, thief_key)
    assert replayed.status_code == 401 and replayed.json()["reason"] == "key-not-signed"
    bare = claim_body([victim], "victim")  # a statement that names no key, re-posted with one
    stolen = post_claim(client, bare, thief_key)
    assert stolen.status_code == 401

    with database.session() as session:
        thief = find_api_key(session, thief_key)
    assert thief is not None
    ledger = app.state.gateway.credits  # type: ignore[attr-defined]
    assert ledger.account_of(thief.id) is None  # the thief's requests spend nobody's credit
    assert ledger.reserve(thief.id, 0.1) is None
