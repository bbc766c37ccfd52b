"""The credit ledger in the database: hourly upserts, accounts, and the leaderboard.

Writes come in batches (:class:`tracker_service.services.credits.CreditLedger`
groups the hops that close together): rows of one node and hour are summed in
memory first, then one ``INSERT … ON CONFLICT DO UPDATE`` per distinct row, all
in one transaction. Reads sum the buckets per node (:func:`credit_sums`); what the
sums mean (windows, forfeiture, ranking by identity, account or team) is the credit
policy's, in services/credit_policy.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, case, delete, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from tracker_service.domain.credit_rules import AccountClaim, owner_of
from tracker_service.store.credit_balances import account_balance as account_balance
from tracker_service.store.credit_balances import spend_now
from tracker_service.store.credit_tables import (
    CreditAccount,
    CreditBucket,
    CreditIdentity,
    CreditKey,
)
from tracker_service.store.db import Database, PreparedStatement
from tracker_service.store.tables import Node

_SUMMED = ("credit", "hops", "tokens", "layer_tokens", "job_units", "own_hops")


@dataclass
class CreditRow:
    """What one node earned in one hour bucket, to be added to the ledger."""

    node_id: str
    hour: int
    credit: float = 0.0
    hops: int = 0
    tokens: int = 0
    layer_tokens: int = 0
    job_units: int = 0
    own_hops: int = 0

    def add(self, other: CreditRow) -> None:
        for name in _SUMMED:
            setattr(self, name, getattr(self, name) + getattr(other, name))


def merge_rows(rows: Iterable[CreditRow]) -> list[CreditRow]:
    """One row per (node, hour): what a batch writes."""
    merged: dict[tuple[str, int], CreditRow] = {}
    for row in rows:
        key = (row.node_id, row.hour)
        if key in merged:
            merged[key].add(row)
        else:
            merged[key] = CreditRow(row.node_id, row.hour)
            merged[key].add(row)
    return list(merged.values())


def add_credit(database: Database, rows: Iterable[CreditRow]) -> int:
    """Add `rows` in one transaction; returns how many bucket rows were written."""
    with database.sessions.begin() as session:
        return add_credit_in(session, rows)


class CreditWriter:
    """The hot path: the upsert compiled once, run as one executemany on the driver's
    connection (as heartbeats are, store/heartbeats.py), one commit per batch."""

    def __init__(self, database: Database) -> None:
        self._engine = database.engine
        self._upsert = PreparedStatement(
            _upsert(database.dialect).compile(dialect=self._engine.dialect)
        )

    def add(self, rows: Iterable[CreditRow]) -> int:
        merged = merge_rows(rows)
        if not merged:
            return 0
        connection = self._engine.raw_connection()
        try:
            cursor = connection.cursor()
            cursor.executemany(self._upsert.sql, [self._upsert.params(vars(r)) for r in merged])
            connection.commit()
        except BaseException:
            connection.rollback()
            raise
        finally:
            connection.close()
        return len(merged)


def linked_members(session: Session) -> tuple[dict[int, str], dict[str, str]]:
    """(key id -> account, node id -> account) for the accounts that have a linked key:
    all the own-key rule needs, read whole (small) and cached by the ledger."""
    keys = {k: a for k, a in session.execute(select(CreditKey.key_id, CreditKey.account))}
    if not keys:
        return {}, {}
    members = session.execute(
        select(CreditIdentity.node_id, CreditIdentity.account).where(
            CreditIdentity.account.in_(set(keys.values()))
        )
    )
    return keys, {node_id: account for node_id, account in members}


def _upsert(dialect: str) -> Any:
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    table = cast(Table, CreditBucket.__table__)
    statement = insert(table)
    return statement.on_conflict_do_update(
        index_elements=["node_id", "hour"],
        set_={name: table.c[name] + statement.excluded[name] for name in _SUMMED},
    )


def add_credit_in(session: Session, rows: Iterable[CreditRow]) -> int:
    """Add `rows` inside the caller's transaction (a job task's commit credits with it)."""
    merged = merge_rows(rows)
    if not merged:
        return 0
    # Core, not ORM: an executemany of one compiled statement.
    session.connection().execute(
        _upsert(session.get_bind().dialect.name), [vars(row) for row in merged]
    )
    return len(merged)


# -- accounts -------------------------------------------------------------------------------


def public_keys(session: Session, node_ids: Sequence[str]) -> dict[str, bytes]:
    rows = session.execute(select(Node.node_id, Node.public_key).where(Node.node_id.in_(node_ids)))
    return {node_id: bytes(key) for node_id, key in rows}


def cap_hosts(session: Session, node_ids: Sequence[str]) -> dict[str, str]:
    """The address each node is counted by (Node.cap_host: the host it registered from
    when relayed, else its endpoint's host)."""
    rows = session.execute(select(Node.node_id, Node.cap_host).where(Node.node_id.in_(node_ids)))
    return {node_id: host for node_id, host in rows}


def account_members(session: Session, account: str) -> list[str]:
    rows = session.execute(
        select(CreditIdentity.node_id).where(CreditIdentity.account == account)
    ).scalars()
    return sorted(rows)


def accounts_created_since(
    session: Session, *, since: float, by: Sequence[str] = (), address: str = ""
) -> tuple[int, int]:
    """(accounts the most active of `by` created, accounts created from `address`)
    since `since`: what the creation limits count."""
    per_identity = 0
    if by:
        counted = session.execute(
            select(func.count())
            .select_from(CreditAccount)
            .where(CreditAccount.created_by.in_(by), CreditAccount.created_at >= since)
            .group_by(CreditAccount.created_by)
        ).scalars()
        per_identity = max(counted, default=0)
    per_address = 0
    if address:
        per_address = session.execute(
            select(func.count())
            .select_from(CreditAccount)
            .where(CreditAccount.created_from == address, CreditAccount.created_at >= since)
        ).scalar_one()
    return int(per_identity), int(per_address)


def account_exists(session: Session, account: str) -> bool:
    return session.get(CreditAccount, account) is not None


def save_claim(
    session: Session,
    claim: AccountClaim,
    *,
    now: float,
    key_id: int | None,
    address: str = "",
) -> None:
    """Create or update the account, link every identity in the claim (moving it from
    another account if it was linked elsewhere: its earnings and spending move with it,
    store/credit_balances.py) and, given one, the API key. An owned ``pc-<node id>``
    account's members become exactly the claim's signers and its only key the one
    posted (a squatter and its keys are unlinked)."""
    found = session.get(CreditAccount, claim.account)
    if found is None:
        session.add(
            CreditAccount(
                account=claim.account,
                display_name=claim.display_name,
                team=claim.team,
                created_at=now,
                updated_at=now,
                created_by=claim.node_ids[0],
                created_from=address,
            )
        )
    else:
        found.display_name, found.team, found.updated_at = claim.display_name, claim.team, now
    if owner_of(claim.account) is not None:
        # The owner's claim unlinks a squatter: its identities and its API keys (a key
        # left linked would spend the owner's credit), every key but the one posted.
        session.execute(delete(CreditIdentity).where(CreditIdentity.account == claim.account))
        session.execute(
            delete(CreditKey).where(
                CreditKey.account == claim.account,
                CreditKey.key_id != (-1 if key_id is None else key_id),
            )
        )
    session.execute(delete(CreditIdentity).where(CreditIdentity.node_id.in_(claim.node_ids)))
    session.add_all(
        CreditIdentity(node_id=node_id, account=claim.account, linked_at=now)
        for node_id in claim.node_ids
    )
    if key_id is not None:
        session.execute(delete(CreditKey).where(CreditKey.key_id == key_id))
        session.add(CreditKey(key_id=key_id, account=claim.account, linked_at=now))


def spend_credit(session: Session, account: str, amount: float, *, now: float = 0.0) -> float:
    """Spend up to `amount` of the account's credit at once; returns what was spent."""
    return spend_now(session, account, amount, now=now)


# -- reads ----------------------------------------------------------------------------------


def credit_sums(session: Session, *, day_since: float, week_since: float) -> list[Any]:
    """Per identity that has a bucket: its sums over all time and since the two window
    starts, its node's state and reason, and its linked account (one row each)."""
    b = CreditBucket
    rows = session.execute(
        select(
            b.node_id,
            func.sum(b.credit),
            func.sum(case((b.hour >= day_since - 3600, b.credit), else_=0.0)),
            func.sum(case((b.hour >= week_since - 3600, b.credit), else_=0.0)),
            func.sum(b.hops),
            func.sum(b.tokens),
            func.sum(b.own_hops),
            func.sum(b.job_units),
            Node.state,
            Node.state_reason,
            CreditIdentity.account,
        )
        .outerjoin(Node, Node.node_id == b.node_id)
        .outerjoin(CreditIdentity, CreditIdentity.node_id == b.node_id)
        .group_by(b.node_id, Node.state, Node.state_reason, CreditIdentity.account)
    )
    return list(rows)


def credit_accounts(session: Session) -> dict[str, CreditAccount]:
    return {a.account: a for a in session.execute(select(CreditAccount)).scalars()}


def account_has_key(session: Session, account: str) -> bool:
    found = session.execute(
        select(CreditKey.key_id).where(CreditKey.account == account).limit(1)
    ).first()
    return found is not None
