"""The credit rules: what one verified hop earns, and what a linking statement says.

Pure functions, no store: the ledger (:mod:`tracker_service.services.credits`)
applies them and ``docs/credits.md`` writes them out for contributors.

A hop earns ``tokens × layers × cost_per_layer`` credit units, counted from its
*verified* receipt only: ``tokens`` is the positions the receipt signs (prompt
and generated tokens alike), ``layers`` the span ``[start, end)`` it ran.
A batch-job task earns ``work_units × JOB_UNIT_CREDIT`` once its result is
committed. Credit units are scaled so one token through one layer of a
cost-1.0 recipe is ``1 / 1000`` credit (a 30-layer model's token is 0.03).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tracker_service.domain.address_groups import address_group
from tracker_service.domain.keys import verify_domain_signature
from tracker_service.errors import LinkRefused

CREDIT_PER_LAYER_TOKEN = 0.001
DEFAULT_COST_PER_LAYER = 1.0
JOB_UNIT_CREDIT = 1.0
BUCKET_S = 3600  # the ledger aggregates per node per hour
# A credited request (its key linked to an account with credit left) spends this much
# per token (prompt + completion) when the gateway gives it priority.
SPEND_PER_TOKEN = 0.01

# v2 names the API key the statement authorises (``api_key_sha256``); a v1 statement
# (an older app) is still accepted, but only to link identities, never a key.
LINK_DOMAIN = b"meshnet.credit-account.v2"
LINK_DOMAIN_V1 = b"meshnet.credit-account.v1"
LINK_WINDOW_S = 300  # a signed statement is accepted this long either side of now
ACCOUNT_PATTERN = r"^[a-z0-9][a-z0-9_.-]{1,62}$"
# ``pc-<node id>``: the app's account of one computer, owned by that node's key.
OWNED_ACCOUNT = re.compile(r"^pc-([0-9a-f]{32})$")
KEY_DIGEST = re.compile(r"^[0-9a-f]{64}$")
MAX_LINKED_IDENTITIES = 64
MAX_LABEL_LEN = 64

FORFEIT_QUARANTINED = "quarantined"


def hop_credit(tokens: int, layers: int, cost_per_layer: float = DEFAULT_COST_PER_LAYER) -> float:
    """Credit of one verified hop: tokens × layers × the recipe's cost per layer."""
    if tokens <= 0 or layers <= 0 or cost_per_layer <= 0:
        return 0.0
    return tokens * layers * cost_per_layer * CREDIT_PER_LAYER_TOKEN


def priority_cost(tokens: int) -> float:
    """Credit a request served with priority spends."""
    return max(0, tokens) * SPEND_PER_TOKEN


def reserve_cost(prompt_tokens: int, max_tokens: int, n: int) -> float:
    """A request's worst case, reserved when it starts: every choice runs to max_tokens."""
    return priority_cost(prompt_tokens + max(0, max_tokens) * max(1, n))


def job_credit(work_units: int) -> float:
    """Credit of one committed batch-job task."""
    return max(0, work_units) * JOB_UNIT_CREDIT


def bucket_of(at: float) -> int:
    """The start of the hour bucket `at` (unix seconds) falls in."""
    return int(at // BUCKET_S) * BUCKET_S


def same_address(caller: str | None, node: str | None) -> bool:
    """A caller and a node seen from the same address group (own traffic)."""
    if not caller or not node:
        return False
    return address_group(caller) == address_group(node)


def owner_of(account: str) -> str | None:
    """The node id that owns ``pc-<node id>``; None for a freely named account."""
    found = OWNED_ACCOUNT.match(account)
    return found.group(1) if found else None


@dataclass(frozen=True)
class AccountClaim:
    """A contributor's account and the identities that all signed it."""

    account: str
    display_name: str
    team: str
    node_ids: tuple[str, ...]
    signed_at: int
    api_key_sha256: str = ""  # the API key this statement authorises ("" for none)

    def statement(self) -> dict[str, Any]:
        """What every linked identity signs (canonical JSON under LINK_DOMAIN)."""
        return self.statement_v1() | {"api_key_sha256": self.api_key_sha256}

    def statement_v1(self) -> dict[str, Any]:
        """An older app's statement (LINK_DOMAIN_V1): it names no key."""
        return {
            "account": self.account,
            "display_name": self.display_name,
            "team": self.team,
            "node_ids": sorted(self.node_ids),
            "signed_at": self.signed_at,
        }


def parse_claim(body: Mapping[str, Any]) -> tuple[AccountClaim, dict[str, str]]:
    """The claim and each identity's signature from a request body; LinkRefused if malformed."""
    account = body.get("account")
    if not isinstance(account, str) or not re.match(ACCOUNT_PATTERN, account):
        raise LinkRefused(
            "bad-account",
            "'account' must be 2 to 63 characters of a-z, 0-9, '_', '.', '-', starting "
            "with a letter or digit",
        )
    labels = {}
    for field in ("display_name", "team"):
        value = body.get(field, "")
        if not isinstance(value, str) or len(value) > MAX_LABEL_LEN or not value.isprintable():
            raise LinkRefused(
                "bad-label", f"'{field}' must be printable text of at most {MAX_LABEL_LEN} chars"
            )
        labels[field] = value.strip()
    signed_at = body.get("signed_at")
    if not isinstance(signed_at, int) or isinstance(signed_at, bool):
        raise LinkRefused("bad-claim", "'signed_at' must be the unix time the statement was signed")
    signatures = body.get("signatures")
    if (
        not isinstance(signatures, dict)
        or not signatures
        or len(signatures) > MAX_LINKED_IDENTITIES
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in signatures.items())
    ):
        raise LinkRefused(
            "bad-claim",
            f"'signatures' must map 1 to {MAX_LINKED_IDENTITIES} node ids to each identity's "
            "base64 Ed25519 signature of the statement",
        )
    key_digest = body.get("api_key_sha256", "")
    if not isinstance(key_digest, str) or (key_digest and not KEY_DIGEST.match(key_digest)):
        raise LinkRefused(
            "bad-claim",
            "'api_key_sha256' must be the lowercase hex SHA-256 of the API key the statement "
            "authorises, or empty",
        )
    claim = AccountClaim(
        account,
        labels["display_name"],
        labels["team"],
        tuple(sorted(signatures)),
        signed_at,
        key_digest,
    )
    return claim, dict(signatures)


def _signed(claim: AccountClaim, key: bytes, signature: str) -> bool:
    if verify_domain_signature(key, signature, LINK_DOMAIN, claim.statement()):
        return True
    # An older app's statement names no key, so it may link identities only.
    return not claim.api_key_sha256 and verify_domain_signature(
        key, signature, LINK_DOMAIN_V1, claim.statement_v1()
    )


def check_claim(
    claim: AccountClaim,
    signatures: Mapping[str, str],
    public_keys: Mapping[str, bytes],
    *,
    now: float,
    members: Sequence[str] = (),
    api_key_sha256: str = "",
) -> None:
    """Raise LinkRefused unless every identity named signed the statement, recently.

    ``members``: the identities already linked to the account; when there are any,
    at least one of them must sign too, so nobody can take over an account by
    signing with identities of their own. ``pc-<node id>`` is owned: only a claim
    that node signs may create or update it. ``api_key_sha256``: the SHA-256 of the
    API key posted with the claim ("" for none); it must be the key the statement
    names, so a claim seen in transit cannot be re-posted to link another key.
    """
    if api_key_sha256 != claim.api_key_sha256:
        raise LinkRefused(
            "key-not-signed",
            "the API key sent is not the one the signed statement names "
            "('api_key_sha256'); sign a statement that names this key",
            status_code=401,
        )
    owner = owner_of(claim.account)
    if owner is not None and owner not in claim.node_ids:
        raise LinkRefused(
            "name-owned",
            f"'{claim.account}' belongs to node {owner}: only a claim that node signs can "
            "create or update it; choose another account name",
            status_code=403,
        )
    if abs(now - claim.signed_at) > LINK_WINDOW_S:
        raise LinkRefused(
            "stale-timestamp",
            f"the statement was signed at {claim.signed_at}, more than {LINK_WINDOW_S} s from "
            "the tracker's clock; sign it again now",
            status_code=401,
        )
    for node_id in claim.node_ids:
        key = public_keys.get(node_id)
        if key is None:
            raise LinkRefused(
                "unknown-node",
                f"node {node_id} is not registered here; an identity must register before "
                "it can be linked",
                status_code=404,
            )
        if not _signed(claim, key, signatures[node_id]):
            raise LinkRefused(
                "bad-signature",
                f"the signature of {node_id} is not its registered key's over this statement",
                status_code=401,
            )
    if owner is None and members and not set(members) & set(claim.node_ids):
        raise LinkRefused(
            "not-a-member",
            f"account '{claim.account}' exists; one of its linked identities must sign too",
            status_code=403,
        )
