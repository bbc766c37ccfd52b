"""Linking identities to a credit account: the signed statement checked and saved.

Each identity signs the same statement (docs/credits.md); an API key sent with it
is linked when the statement names it. Account creation is limited per identity
and per address group a day (the operator's settings).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from tracker_service.config import Settings
from tracker_service.domain.credit_rules import AccountClaim, check_claim, parse_claim
from tracker_service.errors import LinkRefused
from tracker_service.store import credits as ledger
from tracker_service.store.api_keys import find_api_key
from tracker_service.store.db import Database
from tracker_service.store.hashed_secrets import hash_secret

DAY_S = 86400.0


@dataclass(frozen=True)
class LinkedAccount:
    account: str
    display_name: str
    team: str
    node_ids: list[str]
    api_key_linked: bool


def _check_creation(
    settings: Settings, session: Any, claim: AccountClaim, address: str, now: float
) -> None:
    """Refuse a new account past the per-identity or per-address daily limit."""
    if ledger.account_exists(session, claim.account):
        return
    by_identity, by_address = ledger.accounts_created_since(
        session, since=now - DAY_S, by=claim.node_ids[:1], address=address
    )
    if by_identity >= settings.credit_accounts_per_identity_per_day:
        raise LinkRefused(
            "too-many-accounts",
            f"identity {claim.node_ids[0]} created {by_identity} accounts in the last day, "
            "its limit; link it to one of them instead, or try again tomorrow",
            status_code=429,
        )
    if address and by_address >= settings.credit_accounts_per_address_per_day:
        raise LinkRefused(
            "too-many-accounts",
            f"{by_address} accounts were created from your address in the last day, its "
            "limit; link to an existing account instead, or try again tomorrow",
            status_code=429,
        )


def link_account(
    settings: Settings, database: Database, body: dict[str, Any], api_key: str | None, address: str
) -> LinkedAccount:
    """Blocking: check a signed account statement and save it (LinkRefused says why not)."""
    claim, signatures = parse_claim(body)
    now = time.time()
    with database.sessions.begin() as session:
        key_id = None
        if api_key is not None:
            found = find_api_key(session, api_key)
            if found is None:
                raise LinkRefused(
                    "invalid-api-key",
                    "the API key sent to be linked is unknown or revoked; send a valid one or none",
                    status_code=401,
                )
            key_id = found.id
        check_claim(
            claim,
            signatures,
            ledger.public_keys(session, list(claim.node_ids)),
            now=now,
            members=ledger.account_members(session, claim.account),
            api_key_sha256=hash_secret(api_key) if api_key is not None else "",
        )
        _check_creation(settings, session, claim, address, now)
        ledger.save_claim(session, claim, now=now, key_id=key_id, address=address)
        members = ledger.account_members(session, claim.account)
        linked = key_id is not None or bool(ledger.account_has_key(session, claim.account))
    return LinkedAccount(
        account=claim.account,
        display_name=claim.display_name,
        team=claim.team,
        node_ids=members,
        api_key_linked=linked,
    )
