"""One identity (or one address) creating accounts by the hundred: creation is limited
per identity and per address group, so the flood stops after a few."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from tests.support.credit_claims import claim_body, post_claim
from tests.tracker_service.conftest import make_settings, register
from tests.tracker_service.helpers import FakeNode
from tracker_service.app import create_app
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


def test_fresh_addresses_of_one_slash_64_count_as_one_address(tmp_path: Path) -> None:
    """Each sybil claims from its own address of one IPv6 /64 (a home is handed a
    whole /64): the per-address limit still counts them together."""
    limit = 3
    app = create_app(
        make_settings(tmp_path, background_tasks=False, credit_accounts_per_address_per_day=limit)
    )
    try:
        codes = []
        for index in range(2 * limit):
            sybil = FakeNode(endpoint=f"ws://127.0.0.1:{9100 + index}")
            assert register(TestClient(app), sybil).status_code == 200
            home = TestClient(app, client=(f"2001:db8:7:7::{index + 1:x}", 40000))
            codes.append(post_claim(home, claim_body([sybil], f"sybil-{index}")).status_code)
        assert codes == [200] * limit + [429] * limit, codes
        other = FakeNode(endpoint="ws://127.0.0.1:9099")
        assert register(TestClient(app), other).status_code == 200
        elsewhere = TestClient(app, client=("2001:db8:7:8::1", 40000))
        assert post_claim(elsewhere, claim_body([other], "elsewhere")).status_code == 200
    finally:
        app.state.tracker.database.dispose()
