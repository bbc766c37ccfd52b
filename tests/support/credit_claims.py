"""Account statements signed by test identities, as the app signs them (docs/credits.md)."""

from __future__ import annotations

import base64
import time
from collections.abc import Sequence
from typing import Any

from tests.tracker_service.helpers import FakeNode
from tracker_service.domain.credit_rules import LINK_DOMAIN, AccountClaim
from tracker_service.domain.wire import domain_message
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
