"""The statement that links this computer's identity to a credit account.

``POST /api/v1/credits/accounts`` (docs/credits.md#accounts-and-teams) takes an
account name, an opt-in display name and team, and each linked identity's
Ed25519 signature of ``meshnet.credit-account.v2`` + newline + the canonical
JSON of ``{"account", "api_key_sha256", "display_name", "team", "node_ids"
(sorted), "signed_at"}``. ``api_key_sha256`` names the API key the statement
authorises (the SHA-256 hex of its text, "" for none), so a statement seen in
transit cannot be re-posted to link someone else's key.
This module builds those bytes and the request body; the tracker re-implements
the check (``tracker_service/domain/credit_rules.py``) and
``tests/core/test_credit_account.py`` pins the two together.

The app links each computer to an account of its own, named after its node id
(:func:`account_for`): stable for as long as the key, and the tracker lets only
this identity's signature create or update it. The tracker strips the labels
before it checks the signature, so :func:`clean_label` strips them here too.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Any

from core.identity.keypair import NodeIdentity
from core.identity.signing import canonical_json

LINK_DOMAIN = b"meshnet.credit-account.v2\n"
ACCOUNTS_PATH = "/api/v1/credits/accounts"
ACCOUNT_PREFIX = "pc-"
MAX_LABEL_LEN = 64


def account_for(node_id: str) -> str:
    """This computer's account: ``pc-`` + its node id (32 hex chars; fits 2 to 63 of
    ``a-z 0-9 _ . -``)."""
    return ACCOUNT_PREFIX + node_id


def clean_label(value: str) -> str:
    """A display name or team as the tracker keeps it: printable, one line, stripped,
    at most MAX_LABEL_LEN characters."""
    printable = "".join(ch if ch.isprintable() else " " for ch in value)
    return " ".join(printable.split())[:MAX_LABEL_LEN].strip()


@dataclass(frozen=True)
class AccountClaim:
    account: str
    display_name: str
    team: str
    node_ids: tuple[str, ...]
    signed_at: int
    api_key_sha256: str = ""

    def statement(self) -> dict[str, Any]:
        return {
            "account": self.account,
            "api_key_sha256": self.api_key_sha256,
            "display_name": self.display_name,
            "team": self.team,
            "node_ids": sorted(self.node_ids),
            "signed_at": self.signed_at,
        }

    def message(self) -> bytes:
        """The bytes every linked identity signs."""
        return LINK_DOMAIN + canonical_json(self.statement())


def key_digest(api_key: str | None) -> str:
    """How a statement names an API key: the SHA-256 hex of its text ("" for none)."""
    return hashlib.sha256(api_key.encode("utf-8")).hexdigest() if api_key else ""


def this_computer_claim(
    identity: NodeIdentity,
    display_name: str,
    team: str,
    *,
    now: float | None = None,
    api_key: str | None = None,
) -> AccountClaim:
    return AccountClaim(
        account=account_for(identity.node_id),
        display_name=clean_label(display_name),
        team=clean_label(team),
        node_ids=(identity.node_id,),
        signed_at=int(time.time() if now is None else now),
        api_key_sha256=key_digest(api_key),
    )


def signed_claim_body(claim: AccountClaim, identity: NodeIdentity) -> dict[str, Any]:
    """The JSON body of ``POST /api/v1/credits/accounts``, signed by ``identity``."""
    return {
        "account": claim.account,
        "display_name": claim.display_name,
        "team": claim.team,
        "signed_at": claim.signed_at,
        "api_key_sha256": claim.api_key_sha256,
        "signatures": {identity.node_id: identity.sign_b64(claim.message())},
    }
