"""Account statements signed by test identities, as the app signs them (docs/credits.md)."""

from __future__ import annotations

import base64
import time
from collections.abc import Sequence
from typing import Any

from tests.tracker_service.helpers import FakeNode
from tracker_service.domain.credit_rules import LINK_DOMAIN, AccountClaim, bucket_of
from tracker_service.domain.wire import domain_message
from tracker_service.store.api_keys import add_api_key, find_api_key
from tracker_service.store.credits import CreditRow, add_credit
from tracker_service.store.db import Database
from tracker_service.store.hashed_secrets import hash_secret


def claim_body(
    nodes: Sequence[FakeNode],
    account: str,
    team: str = "",
    *,
    api_key: str | None = None,
    signed_at: int | None = None,
) -> dict[str, Any]:
    """A claim every node in `nodes` signed; it names `api_key` when one is given."""
    claim = AccountClaim(
        account,
        account.title(),
        team,
        tuple(sorted(n.node_id for n in nodes)),
        int(time.time()) if signed_at is None else signed_at,
        hash_secret(api_key) if api_key else "",
    )
    message = domain_message(LINK_DOMAIN, claim.statement())
    return {
        "account": account,
        "display_name": claim.display_name,
        "team": team,
        "signed_at": claim.signed_at,
        "api_key_sha256": claim.api_key_sha256,
        "signatures": {n.node_id: base64.b64encode(n.key.sign(message)).decode() for n in nodes},
    }


def post_claim(
    client: Any, body: dict[str, Any], api_key: str | None = None
) -> Any:  # httpx's Response, or TestClient's
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return client.post("/api/v1/credits/accounts", json=body, headers=headers)


def give_credit(database: Database, node_id: str, amount: float) -> None:
    """Credit as verified work would have earned it (the ledger's own write)."""
    add_credit(database, [CreditRow(node_id, bucket_of(time.time()), credit=amount, hops=1)])


def total_spent(app: Any) -> float:
    """Credit the tracker's requests spent on priority since it started, as the gateway
    settled it (counted apart from the rows an attack may try to move)."""
    return float(app.state.gateway.credits.spent)


def new_api_key(database: Database, label: str) -> str:
    with database.sessions.begin() as session:
        _, text = add_api_key(session, label=label, now=time.time())
    return text


def wait_linked(app: Any, database: Database, key: str, account: str) -> None:
    """Wait until the gateway's ledger sees `key` linked to `account` (it re-reads the
    links every 2 s), so the next request spends that account's credit."""
    with database.session() as session:
        found = find_api_key(session, key)
    assert found is not None
    deadline = time.monotonic() + 10
    while app.state.gateway.credits.account_of(found.id) != account:
        assert time.monotonic() < deadline, f"the gateway never saw the key linked to {account}"
        time.sleep(0.05)
