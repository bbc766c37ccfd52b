"""One identity (or one address) creating accounts by the hundred: creation is limited
per identity and per address group, so the flood stops after a few."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.support.credit_claims import claim_body, post_claim
from tests.tracker_service.conftest import register
from tests.tracker_service.helpers import FakeNode
from tracker_service.config import Settings

FLOOD = 300


def test_one_identity_cannot_create_hundreds_of_accounts(
    client: TestClient, settings: Settings
) -> None:
    flooder = FakeNode()
    assert register(client, flooder).status_code == 200
    codes = [
        post_claim(client, claim_body([flooder], f"flood-{index}")).status_code
        for index in range(FLOOD)
    ]
    assert codes.count(200) == settings.credit_accounts_per_identity_per_day
    assert set(codes) == {200, 429}
    refused = post_claim(client, claim_body([flooder], "one-more"))
    assert refused.json()["reason"] == "too-many-accounts"
    # Updating an account it already made is no creation: still allowed.
    assert post_claim(client, claim_body([flooder], "flood-0")).status_code == 200


def test_many_identities_from_one_address_cannot_create_hundreds_of_accounts(
    client: TestClient, settings: Settings
) -> None:
    created = 0
    for index in range(settings.credit_accounts_per_address_per_day + 10):
        sybil = FakeNode(endpoint=f"ws://127.0.0.1:{9100 + index}")
        assert register(client, sybil).status_code == 200
        created += post_claim(client, claim_body([sybil], f"sybil-{index}")).status_code == 200
    assert created == settings.credit_accounts_per_address_per_day
