"""One identity that earned a little moves from account to account, re-linking its API
key each time: what it spent moves with it, so it never spends more than it earned."""

from __future__ import annotations

from tests.support.credit_chats import chat, keys_enforced
from tests.support.credit_claims import (
    claim_body,
    give_credit,
    new_api_key,
    post_claim,
    total_spent,
    wait_linked,
)
from tests.tracker_service.conftest import register
from tests.tracker_service.gateway_cluster import GatewayCluster
from tests.tracker_service.helpers import FakeNode

EARNED = 0.3
ACCOUNTS = 5
CHATS_PER_ACCOUNT = 3
# Five accounts for one identity: past the default creation limit, which has its own test.
CLUSTER_SETTINGS = {"credit_accounts_per_identity_per_day": 10}


def test_moving_an_identity_between_accounts_never_makes_spent_credit_spendable_again(
    credit_cluster: GatewayCluster,
) -> None:
    database = credit_cluster.app.state.tracker.database
    spender = FakeNode(endpoint="ws://127.0.0.1:9102")
    key = new_api_key(database, "spender")
    with credit_cluster.http() as http:
        assert register(http, spender).status_code == 200
        give_credit(database, spender.node_id, EARNED)
        keys_enforced(credit_cluster)
        spent_in_first = 0.0
        for index in range(ACCOUNTS):
            body = claim_body([spender], f"spender-{index}", api_key=key)
            assert post_claim(http, body, key).status_code == 200
            wait_linked(credit_cluster.app, database, key, f"spender-{index}")
            for _ in range(CHATS_PER_ACCOUNT):
                chat(credit_cluster, key)
            if index == 0:
                spent_in_first = total_spent(credit_cluster.app)

    assert spent_in_first > 0  # the first account did buy priority with the credit
    assert total_spent(credit_cluster.app) <= EARNED + 1e-9  # credit spent beyond earnings: 0
