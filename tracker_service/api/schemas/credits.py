"""The credit leaderboard and account linking (docs/credits.md)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from tracker_service.domain.credit_rules import (
    ACCOUNT_PATTERN,
    MAX_LABEL_LEN,
    MAX_LINKED_IDENTITIES,
)
from tracker_service.services.credit_policy import LeaderRow


class IdentityCreditPublic(BaseModel):
    node_id: str
    total: float = Field(description="credit that counts: 0 when forfeited")
    earned: float = Field(description="what its verified hops earned, kept as evidence")
    last_24h: float
    last_7d: float
    hops: int = Field(description="verified hop receipts")
    tokens: int
    own_hops: int = Field(description="hops of its own contributor's requests: no credit")
    job_units: int
    forfeited: str | None = Field(description="why the credit counts 0 (quarantine), or null")


class CreditPublic(BaseModel):
    id: str = Field(description="account name, node id or team name")
    kind: str = Field(description="account, identity or team")
    rank: int
    display_name: str
    team: str
    total: float
    last_24h: float = Field(description="credit of the last 24 hours, to the hour")
    last_7d: float = Field(description="credit of the last 7 days, to the hour")
    hops: int
    tokens: int
    forfeited: str | None = None


class CreditDetailPublic(CreditPublic):
    identities: list[IdentityCreditPublic]


class CreditPagePublic(BaseModel):
    kind: str
    total_rows: int
    offset: int
    limit: int
    rows: list[CreditPublic]


class AccountClaimCreate(BaseModel):
    """An account and the identities linked to it, each proving it by a signature."""

    account: str = Field(pattern=ACCOUNT_PATTERN, examples=["ada"])
    display_name: str = Field("", max_length=MAX_LABEL_LEN, description="opt-in; '' shows none")
    team: str = Field("", max_length=MAX_LABEL_LEN)
    signed_at: int = Field(description="unix seconds; within 300 s of the tracker's clock")
    signatures: dict[str, str] = Field(
        min_length=1,
        max_length=MAX_LINKED_IDENTITIES,
        description="node id -> base64 Ed25519 signature by that identity of "
        "'meshnet.credit-account.v2\\n' + canonical JSON of {account, api_key_sha256, "
        "display_name, team, node_ids (sorted), signed_at}",
    )
    api_key_sha256: str = Field(
        "",
        description="hex SHA-256 of the API key this statement authorises (the one sent "
        "as 'Authorization: Bearer'); '' links no key",
    )


class AccountPublic(BaseModel):
    account: str
    display_name: str
    team: str
    node_ids: list[str]
    api_key_linked: bool


def as_json(row: LeaderRow, *, with_identities: bool) -> dict[str, Any]:
    found: dict[str, Any] = {
        "id": row.id,
        "kind": row.kind,
        "rank": row.rank,
        "display_name": row.display_name,
        "team": row.team,
        "total": round(row.total, 6),
        "last_24h": round(row.last_24h, 6),
        "last_7d": round(row.last_7d, 6),
        "hops": row.hops,
        "tokens": row.tokens,
        "forfeited": row.forfeited,
    }
    if with_identities:
        found["identities"] = [
            {
                "node_id": i.node_id,
                "total": round(i.total, 6),
                "earned": round(i.earned, 6),
                "last_24h": round(0.0 if i.forfeited else i.last_24h, 6),
                "last_7d": round(0.0 if i.forfeited else i.last_7d, 6),
                "hops": i.hops,
                "tokens": i.tokens,
                "own_hops": i.own_hops,
                "job_units": i.job_units,
                "forfeited": i.forfeited,
            }
            for i in row.identities
        ]
    return found
