"""Credit spent on priority: per identity, reserved when a request starts, settled when it ends.

Earnings are the identity's hour buckets (``credit_buckets``); spending is the
identity's ``credit_spends`` row. Both are keyed by the node id, so an identity
that moves to another account takes what it earned *and* what it spent with it:
an account's balance is the sum over its identities of
``earned − spent − reserved``, and moving never frees spent credit.

A request reserves its worst case across its account's identities in one
transaction: the rows are locked (``FOR UPDATE`` on PostgreSQL; the first
statement is a write, so SQLite holds its write lock from the start), each
identity gives what it has left, and a reservation that does not fit is not
taken at all. Concurrent requests, on one replica or many, therefore never
reserve more than was earned; settling spends what the request used (never
more than it reserved) and gives the rest back.

Each hold is also a ``credit_reservations`` row that expires RESERVATION_TTL_S after
it was taken (longer than any request runs): ``release_expired`` gives back what
expired holds still reserve, so a request killed mid-way, or whose settle failed,
locks nothing for good. Settling or releasing deletes the hold's row first and gives
its amount back only if that delete found it: one of the two does, never both. A
settle that comes after its hold was released spends only what is still free, since
other requests may hold that credit by then.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any, cast

from sqlalchemy import CursorResult, Table, delete, func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from tracker_service.store.credit_tables import (
    CreditBucket,
    CreditIdentity,
    CreditReservation,
    CreditSpend,
)
from tracker_service.store.tables import NODE_QUARANTINED, Node

EPSILON = 1e-9  # float slack: a reservation of exactly what is left fits
# A hold is given back this long after it was taken if it never settled: far longer
# than a request runs (max_tokens steps of at most gateway_step_timeout_s each, in
# practice minutes), short enough that a crashed request's credit comes back the same day.
RESERVATION_TTL_S = 3600.0


def member_ids(session: Session, account: str) -> list[str]:
    rows = session.execute(
        select(CreditIdentity.node_id).where(CreditIdentity.account == account)
    ).scalars()
    return sorted(rows)


def earned_by(session: Session, node_ids: Sequence[str]) -> dict[str, float]:
    """What each identity earned, all time; 0 for a quarantined one (forfeited)."""
    if not node_ids:
        return {}
    rows = session.execute(
        select(CreditBucket.node_id, func.coalesce(func.sum(CreditBucket.credit), 0.0))
        .outerjoin(Node, Node.node_id == CreditBucket.node_id)
        .where(CreditBucket.node_id.in_(node_ids))
        .where((Node.state.is_(None)) | (Node.state != NODE_QUARANTINED))
        .group_by(CreditBucket.node_id)
    )
    found = {node_id: 0.0 for node_id in node_ids}
    found.update({node_id: float(total) for node_id, total in rows})
    return found


def spent_by(session: Session, node_ids: Sequence[str]) -> dict[str, tuple[float, float]]:
    """(spent, reserved) of each identity that has a spending row."""
    if not node_ids:
        return {}
    rows = session.execute(
        select(CreditSpend.node_id, CreditSpend.spent, CreditSpend.reserved).where(
            CreditSpend.node_id.in_(node_ids)
        )
    )
    return {node_id: (float(spent), float(reserved)) for node_id, spent, reserved in rows}


def account_balance(session: Session, account: str) -> float:
    """Credit an account may still reserve: Σ over its identities of earned − spent −
    reserved (a quarantined identity earned 0)."""
    members = member_ids(session, account)
    earned = earned_by(session, members)
    spending = spent_by(session, members)
    return sum(earned[n] - sum(spending.get(n, (0.0, 0.0))) for n in members)


def _ensure_rows(session: Session, node_ids: Sequence[str], now: float) -> None:
    """A spending row for each identity (a write first: SQLite's lock from here on)."""
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    table = cast(Table, CreditSpend.__table__)
    session.execute(
        insert(table).on_conflict_do_nothing(index_elements=["node_id"]),
        [{"node_id": n, "spent": 0.0, "reserved": 0.0, "updated_at": now} for n in node_ids],
    )


def reserve(
    session: Session, account: str, amount: float, *, now: float, hold: str
) -> dict[str, float]:
    """Hold `amount` of the account's credit, taken from its identities in node-id order,
    as hold `hold` (the request's id, unique); {} (nothing held) when the account has
    less than that left. The caller commits."""
    members = member_ids(session, account)
    if amount <= 0 or not members:
        return {}
    earned = earned_by(session, members)
    _ensure_rows(session, members, now)
    locked = session.execute(
        select(CreditSpend.node_id, CreditSpend.spent, CreditSpend.reserved)
        .where(CreditSpend.node_id.in_(members))
        .order_by(CreditSpend.node_id)
        .with_for_update()
    ).all()
    takes: dict[str, float] = {}
    remaining = amount
    for node_id, spent, reserved in locked:
        left = earned[node_id] - float(spent) - float(reserved)
        take = min(left, remaining)
        if take > 0:
            takes[node_id] = take
            remaining -= take
        if remaining <= EPSILON:
            break
    if remaining > EPSILON:
        return {}
    for node_id, take in takes.items():
        session.execute(
            update(CreditSpend)
            .where(CreditSpend.node_id == node_id)
            .values(reserved=CreditSpend.reserved + take, updated_at=now)
        )
        session.add(
            CreditReservation(
                hold=hold, node_id=node_id, amount=take, expires_at=now + RESERVATION_TTL_S
            )
        )
    return takes


def _give_back(session: Session, hold: str, node_id: str, held: float, now: float) -> bool:
    """Take `held` off the identity's reserved credit if the hold's row is still there
    (not already settled or released); True when it was."""
    found = session.execute(
        delete(CreditReservation).where(
            CreditReservation.hold == hold, CreditReservation.node_id == node_id
        )
    )
    if not cast(CursorResult[Any], found).rowcount:
        return False
    floor = func.max if session.get_bind().dialect.name == "sqlite" else func.greatest
    session.execute(
        update(CreditSpend)
        .where(CreditSpend.node_id == node_id)
        .values(reserved=floor(CreditSpend.reserved - held, 0.0), updated_at=now)
    )
    return True


def release_expired(session: Session, *, now: float) -> int:
    """Give back every hold that expired unsettled; returns how many. The caller commits."""
    expired = session.execute(
        select(CreditReservation.hold, CreditReservation.node_id, CreditReservation.amount)
        .where(CreditReservation.expires_at < now)
        .order_by(CreditReservation.node_id)
    ).all()
    return sum(_give_back(session, h, n, float(a), now) for h, n, a in expired)


def settle(
    session: Session, takes: Mapping[str, float], cost: float, *, now: float, hold: str
) -> float:
    """End hold `hold`: spend `cost` (at most what was held) from the identities that
    held it, give the rest back (unless it expired and was released already); returns
    what was spent. The caller commits."""
    remaining = max(0.0, cost)
    spent = 0.0
    for node_id in sorted(takes):
        held = takes[node_id]
        use = min(held, remaining)
        if not _give_back(session, hold, node_id, held, now):
            # The hold expired and was released: what it held may be another request's
            # now, so this late settle spends only what is still free (no overdraft).
            use = min(use, _free(session, node_id))
        remaining -= use
        spent += use
        session.execute(
            update(CreditSpend)
            .where(CreditSpend.node_id == node_id)
            .values(spent=CreditSpend.spent + use, updated_at=now)
        )
    return spent


def _free(session: Session, node_id: str) -> float:
    """What the identity may still spend (earned − spent − reserved), its row locked."""
    row = session.execute(
        select(CreditSpend.spent, CreditSpend.reserved)
        .where(CreditSpend.node_id == node_id)
        .with_for_update()
    ).one_or_none()
    used = float(row[0]) + float(row[1]) if row is not None else 0.0
    return max(0.0, earned_by(session, [node_id])[node_id] - used)


def spend_now(session: Session, account: str, amount: float, *, now: float) -> float:
    """Reserve and settle at once (an operator's charge, tests); returns what was spent:
    at most what the account has left, never more."""
    members = member_ids(session, account)
    earned = earned_by(session, members)
    spending = spent_by(session, members)
    left = sum(max(0.0, earned[n] - sum(spending.get(n, (0.0, 0.0)))) for n in members)
    amount = min(amount, left)
    hold = uuid.uuid4().hex
    takes = reserve(session, account, amount, now=now, hold=hold)
    return settle(session, takes, amount, now=now, hold=hold)
