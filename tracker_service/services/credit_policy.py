"""The credit policy in one place: what earns credit, and how it is counted and ranked.

- A verified hop earns ``hop_credit`` (domain/credit_rules.py), except an own hop,
  which earns 0 and is counted as ``own_hops`` so the rule shows in the ledger:
  the session's API key is linked to the node's own account, or any key's request
  came from the node's own address group (:func:`hop_rows`).
- A checked job task earns ``job_credit`` per work unit (:func:`pay_job_credit`), paid
  in the completion's own transaction (so a result and its credit commit together or
  not at all); which results stand is the job check's rule (store/job_checks.py).
- Windows: the last 24 h and the last 7 days, by hourly bucket (:func:`identity_credits`).
- Forfeiture: a quarantined identity's credit counts 0; its rows stay as evidence.
- Ranking: per identity at heart, rolled up by account or team (:func:`leaderboard`).

The store (store/credits.py) only sums and writes; this decides what the sums mean.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from tracker_service.domain.credit_rules import (
    FORFEIT_QUARANTINED,
    bucket_of,
    hop_credit,
    job_credit,
    same_address,
)
from tracker_service.store.credit_tables import CreditAccount
from tracker_service.store.credits import CreditRow, add_credit_in, credit_accounts, credit_sums
from tracker_service.store.tables import NODE_QUARANTINED

DAY_S = 86400.0
WEEK_S = 7 * DAY_S
KINDS = ("account", "identity", "team")


@dataclass(frozen=True)
class VerifiedHop:
    node_id: str
    tokens: int
    layers: int
    cost_per_layer: float
    key_id: int | None
    at: float
    caller_host: str | None = None  # the address the request came from


def hop_rows(
    hops: Sequence[VerifiedHop],
    key_accounts: Mapping[int, str],
    node_accounts: Mapping[str, str],
    node_hosts: Mapping[str, str],
) -> list[CreditRow]:
    """The ledger rows of verified hops: each hop's credit, 0 for an own hop."""
    rows = []
    for hop in hops:
        payer = key_accounts.get(hop.key_id) if hop.key_id is not None else None
        # Own traffic: a key of the node's own account, or any key (linked to a
        # throwaway account or to none) whose request came from the node's address.
        own = (payer is not None and node_accounts.get(hop.node_id) == payer) or (
            hop.key_id is not None and same_address(hop.caller_host, node_hosts.get(hop.node_id))
        )
        rows.append(
            CreditRow(
                hop.node_id,
                bucket_of(hop.at),
                credit=0.0 if own else hop_credit(hop.tokens, hop.layers, hop.cost_per_layer),
                hops=1,
                tokens=hop.tokens,
                layer_tokens=hop.tokens * hop.layers,
                own_hops=1 if own else 0,
            )
        )
    return rows


@dataclass
class IdentityCredit:
    node_id: str
    account: str | None
    earned: float  # what its verified hops earned, forfeited or not
    last_24h: float
    last_7d: float
    hops: int
    tokens: int
    own_hops: int
    job_units: int
    forfeited: str | None  # why its credit counts 0, or None

    @property
    def total(self) -> float:
        return 0.0 if self.forfeited else self.earned


@dataclass
class LeaderRow:
    id: str
    kind: str
    display_name: str
    team: str
    total: float = 0.0
    last_24h: float = 0.0
    last_7d: float = 0.0
    hops: int = 0
    tokens: int = 0
    identities: list[IdentityCredit] = field(default_factory=list)
    forfeited: str | None = None
    rank: int = 0

    def add(self, identity: IdentityCredit) -> None:
        self.identities.append(identity)
        if identity.forfeited:
            return
        self.total += identity.earned
        self.last_24h += identity.last_24h
        self.last_7d += identity.last_7d
        self.hops += identity.hops
        self.tokens += identity.tokens


def identity_credits(session: Session, *, now: float) -> list[IdentityCredit]:
    """Every identity that has a bucket, summed over all time and the two windows."""
    day, week = now - DAY_S, now - WEEK_S
    rows = credit_sums(session, day_since=day, week_since=week)
    found = []
    for node_id, total, d1, d7, hops, tokens, own, units, state, reason, account in rows:
        forfeited = None
        if state == NODE_QUARANTINED:
            forfeited = f"{FORFEIT_QUARANTINED}: {reason or 'a hop audit found it lying'}"
        found.append(
            IdentityCredit(
                node_id,
                account,
                float(total or 0.0),
                float(d1 or 0.0),
                float(d7 or 0.0),
                int(hops or 0),
                int(tokens or 0),
                int(own or 0),
                int(units or 0),
                forfeited,
            )
        )
    return found


def leaderboard(session: Session, *, kind: str, now: float) -> list[LeaderRow]:
    """Every row of one kind (account, identity, team), ranked by total credit.

    By account: an identity linked to no account stands as its own row (kind
    ``identity``), so an unlinked contributor still appears.
    """
    return _ranked(identity_credits(session, now=now), credit_accounts(session), kind)


def leaderboards(session: Session, *, now: float) -> dict[str, list[LeaderRow]]:
    """Every kind's board from one sum of the ledger (what the cache rebuilds at once,
    so the boards of one moment agree)."""
    identities, accounts = identity_credits(session, now=now), credit_accounts(session)
    return {kind: _ranked(identities, accounts, kind) for kind in KINDS}


def _ranked(
    identities: list[IdentityCredit], accounts: dict[str, CreditAccount], kind: str
) -> list[LeaderRow]:
    rows: dict[str, LeaderRow] = {}
    for identity in identities:
        account = accounts.get(identity.account or "")
        if kind == "identity" or (kind == "account" and account is None):
            row = rows.setdefault(
                identity.node_id,
                LeaderRow(
                    identity.node_id,
                    "identity",
                    account.display_name if account else "",
                    account.team if account else "",
                ),
            )
            row.forfeited = identity.forfeited
        elif kind == "account":
            assert account is not None
            row = rows.setdefault(
                account.account,
                LeaderRow(account.account, "account", account.display_name, account.team),
            )
        else:
            team = account.team if account and account.team else ""
            if not team:
                continue  # a team board lists teams only
            row = rows.setdefault(team, LeaderRow(team, "team", team, team))
        row.add(identity)
    ranked = sorted(rows.values(), key=lambda r: (-r.total, r.id))
    for rank, row in enumerate(ranked, start=1):
        row.rank = rank
    return ranked


def find_credit(session: Session, credit_id: str, *, now: float) -> LeaderRow | None:
    """One account, identity or team by its id (account names are looked up first)."""
    for kind in KINDS:
        for row in leaderboard(session, kind=kind, now=now):
            if row.id == credit_id and (row.kind == kind or kind == "account"):
                return row
    return None


def pay_job_credit(session: Session, node_id: str, now: float) -> None:
    """One checked work unit's credit to ``node_id``, in the caller's transaction."""
    add_credit_in(session, [CreditRow(node_id, bucket_of(now), credit=job_credit(1), job_units=1)])
