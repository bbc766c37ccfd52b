"""credits: expiring reservations; squats of pc-<node id> made before names were owned unlinked

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-06 00:30:00
"""

from __future__ import annotations

import re

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

# Frozen copy of domain.credit_rules.OWNED_ACCOUNT as of this revision.
_OWNED = re.compile(r"^pc-([0-9a-f]{32})$")

_IDENTITIES = sa.table("credit_identities", sa.column("node_id"), sa.column("account"))
_KEYS = sa.table("credit_keys", sa.column("key_id"), sa.column("account"))


def _unlink_squats() -> None:
    """A pc-<id> account whose members do not include <id> was taken by someone else
    before only that node could create it: its identities and keys are unlinked (a key
    left there would spend the owner's credit once the owner links)."""
    connection = op.get_bind()
    rows = connection.execute(sa.select(_IDENTITIES.c.account, _IDENTITIES.c.node_id)).all()
    keys = connection.execute(sa.select(_KEYS.c.account)).scalars().all()
    members: dict[str, set[str]] = {}
    for account, node_id in rows:
        members.setdefault(account, set()).add(node_id)
    squatted = []
    for account in set(members) | set(keys):
        found = _OWNED.match(account)
        if found and found.group(1) not in members.get(account, set()):
            squatted.append(account)
    if squatted:
        connection.execute(_IDENTITIES.delete().where(_IDENTITIES.c.account.in_(squatted)))
        connection.execute(_KEYS.delete().where(_KEYS.c.account.in_(squatted)))


def upgrade() -> None:
    op.create_table(
        "credit_reservations",
        sa.Column("hold", sa.String(length=32), nullable=False),
        sa.Column("node_id", sa.String(length=32), nullable=False),
        sa.Column("amount", sa.Float(), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("hold", "node_id"),
    )
    op.create_index(
        "ix_credit_reservations_expires_at", "credit_reservations", ["expires_at"], unique=False
    )
    # Holds taken before this revision have no row and could never be given back.
    op.execute(sa.text("UPDATE credit_spends SET reserved = 0"))
    _unlink_squats()


def downgrade() -> None:
    op.drop_index("ix_credit_reservations_expires_at", table_name="credit_reservations")
    op.drop_table("credit_reservations")
