"""``pc-<node id>`` is the app's account of one computer: node ids are public, so an
attacker tries to take a victim's name first. Only that node's signature creates it."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.support.credit_claims import claim_body, post_claim
from tests.tracker_service.conftest import register
from tests.tracker_service.helpers import FakeNode


def test_a_squatter_cannot_take_a_computers_account_and_the_computer_still_links(
    client: TestClient,
) -> None:
    victim, squatter = FakeNode(), FakeNode(endpoint="ws://127.0.0.1:9002")
    assert register(client, victim).status_code == 200
    assert register(client, squatter).status_code == 200
    name = f"pc-{victim.node_id}"

    taken = post_claim(client, claim_body([squatter], name))
    assert taken.status_code == 403 and taken.json()["reason"] == "name-owned"

    linked = post_claim(client, claim_body([victim], name))
    assert linked.status_code == 200, linked.text
    assert linked.json()["node_ids"] == [victim.node_id]
    detail = client.get(f"/api/v1/credits/{name}")
    assert detail.status_code in (200, 404)  # listed once it has credit; never the squatter's
    if detail.status_code == 200:
        assert {i["node_id"] for i in detail.json()["identities"]} == {victim.node_id}
