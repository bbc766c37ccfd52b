"""Tables of the credit ledger: hourly credit per node, accounts, and who is linked.

Kept apart from ``tables.py`` (same ``Base``), as the job and invite tables are;
the migrations ``0011_credits.py``, ``0013_credit_ledger.py`` and
``0019_credit_reservations.py`` must describe exactly these tables.
One row per node per hour (``credit_buckets``) is what keeps the ledger's cost
per verified hop an upsert into a row that is already hot, not a new row.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Float, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from tracker_service.store.tables import NODE_ID_LEN, Base

ACCOUNT_LEN = 64
LABEL_LEN = 64
ADDRESS_LEN = 64  # an address group: IPv4, or an IPv6 /64 written as its prefix


class CreditBucket(Base):
    """Credit one node earned in one hour (``hour``: the bucket's start, unix seconds)."""

    __tablename__ = "credit_buckets"

    node_id: Mapped[str] = mapped_column(String(NODE_ID_LEN), primary_key=True)
    hour: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    credit: Mapped[float] = mapped_column(Float, default=0.0)
    hops: Mapped[int] = mapped_column(BigInteger, default=0)  # verified hop receipts
    tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    layer_tokens: Mapped[int] = mapped_column(BigInteger, default=0)  # Σ tokens × layers
    job_units: Mapped[int] = mapped_column(BigInteger, default=0)
    # Hops whose session the node's own contributor requested: counted, never credited.
    own_hops: Mapped[int] = mapped_column(BigInteger, default=0)

    __table_args__ = (Index("ix_credit_buckets_hour", "hour"),)


class CreditAccount(Base):
    """A contributor's account: opt-in display name and team."""

    __tablename__ = "credit_accounts"

    account: Mapped[str] = mapped_column(String(ACCOUNT_LEN), primary_key=True)
    display_name: Mapped[str] = mapped_column(String(LABEL_LEN), default="")
    team: Mapped[str] = mapped_column(String(LABEL_LEN), default="")
    created_at: Mapped[float] = mapped_column(Float)
    updated_at: Mapped[float] = mapped_column(Float)
    # Who made it and from where: account creation is limited per identity and per
    # address (docs/credits.md#accounts-and-teams). ``created_by``: the first signer.
    created_by: Mapped[str] = mapped_column(
        String(NODE_ID_LEN), default="", server_default="", index=True
    )
    created_from: Mapped[str] = mapped_column(
        String(ADDRESS_LEN), default="", server_default="", index=True
    )


class CreditSpend(Base):
    """What one identity's credit paid for priority, and what requests under way hold.

    Bound to the identity, not to its account: an identity that moves to another
    account takes its spending with it, so moving never makes spent credit spendable
    again. ``reserved``: the worst case of the requests under way, taken when they
    start (a conditional update, so concurrent requests never overdraw), given back
    when they settle. Available = earned (``credit_buckets``) − spent − reserved.
    """

    __tablename__ = "credit_spends"

    node_id: Mapped[str] = mapped_column(String(NODE_ID_LEN), primary_key=True)
    spent: Mapped[float] = mapped_column(Float, default=0.0)
    reserved: Mapped[float] = mapped_column(Float, default=0.0)
    updated_at: Mapped[float] = mapped_column(Float)


class CreditReservation(Base):
    """One request's hold on one identity's credit (``hold``: the request's id), part of
    ``credit_spends.reserved`` until it settles or expires (``expires_at``, unix
    seconds). An expired one is swept and given back: a request that crashed or could
    not settle never locks credit for good (docs/credits.md#credit-spent-contributors-go-first)."""

    __tablename__ = "credit_reservations"

    hold: Mapped[str] = mapped_column(String(32), primary_key=True)
    node_id: Mapped[str] = mapped_column(String(NODE_ID_LEN), primary_key=True)
    amount: Mapped[float] = mapped_column(Float)
    expires_at: Mapped[float] = mapped_column(Float, index=True)


class CreditIdentity(Base):
    """A node identity linked to an account, by its own signature."""

    __tablename__ = "credit_identities"

    node_id: Mapped[str] = mapped_column(String(NODE_ID_LEN), primary_key=True)
    account: Mapped[str] = mapped_column(String(ACCOUNT_LEN), index=True)
    linked_at: Mapped[float] = mapped_column(Float)


class CreditKey(Base):
    """A gateway API key linked to an account: its requests earn that account nothing."""

    __tablename__ = "credit_keys"

    key_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    account: Mapped[str] = mapped_column(String(ACCOUNT_LEN), index=True)
    linked_at: Mapped[float] = mapped_column(Float)
