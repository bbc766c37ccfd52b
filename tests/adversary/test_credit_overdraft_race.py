"""Many requests at once on a tiny balance: each reserves its worst case when it starts,
so together they never spend more credit than the account earned (docs/credits.md)."""

from __future__ import annotations

from tests.support.credit_chats import chats_at_once, keys_enforced
from tests.support.credit_claims import (
    claim_body,
    give_credit,
    new_api_key,
    post_claim,
    total_spent,
)
from tests.tracker_service.conftest import register
from tests.tracker_service.gateway_cluster import GatewayCluster
from tests.tracker_service.helpers import FakeNode
from tracker_service.domain.credit_rules import SPEND_PER_TOKEN

EARNED = 0.5
REQUESTS = 16
MAX_TOKENS = 8


def test_concurrent_requests_never_spend_beyond_what_was_earned(
    credit_cluster: GatewayCluster,
) -> None:
    database = credit_cluster.app.state.tracker.database
    contributor = FakeNode(endpoint="ws://127.0.0.1:9101")
    with credit_cluster.http() as http:
        assert register(http, contributor).status_code == 200
        give_credit(database, contributor.node_id, EARNED)
        key = new_api_key(database, "racer")
        body = claim_body([contributor], "racer", api_key=key)
        assert post_claim(http, body, key).status_code == 200
    keys_enforced(credit_cluster)

    answers = chats_at_once(credit_cluster, key, REQUESTS, MAX_TOKENS)

    used = sum(a["usage"]["total_tokens"] for a in answers) * SPEND_PER_TOKEN
    assert used > 3 * EARNED  # the requests cost far more than the balance ...
    spent = total_spent(credit_cluster.app)
    assert spent > 0  # ... some of them went first, on credit ...
    assert spent <= EARNED + 1e-9  # ... and credit spent beyond earnings is 0
