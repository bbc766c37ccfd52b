"""credit ledger: spending bound to identities, reservations, account creation limits

``credit_spends``: per identity, what its credit paid for priority and what requests
under way have reserved (docs/credits.md#credit-spent-contributors-go-first). Until
now spending was a column of the account, left behind when an identity moved to
another account; what an account spent moves to its first identity here.
``credit_accounts.created_by`` / ``created_from``: who created an account and from
which address group, for the per-identity and per-address creation limits.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-05 23:00:00
"""

from __future__ import annotations

import time

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "credit_spends",
        sa.Column("node_id", sa.String(length=32), nullable=False),
        sa.Column("spent", sa.Float(), nullable=False),
        sa.Column("reserved", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("node_id"),
    )
    bind = op.get_bind()
    spent = bind.execute(
        sa.text(
            "SELECT a.spent, MIN(i.node_id) FROM credit_accounts a "
            "JOIN credit_identities i ON i.account = a.account "
            "WHERE a.spent > 0 GROUP BY a.account, a.spent"
        )
    ).all()
    for amount, node_id in spent:
        bind.execute(
            sa.text(
                "INSERT INTO credit_spends (node_id, spent, reserved, updated_at) "
                "VALUES (:node_id, :spent, 0.0, :now)"
            ),
            {"node_id": node_id, "spent": float(amount), "now": time.time()},
        )
    with op.batch_alter_table("credit_accounts") as batch:
        batch.drop_column("spent")
        batch.add_column(sa.Column("created_by", sa.String(32), nullable=False, server_default=""))
        batch.add_column(
            sa.Column("created_from", sa.String(64), nullable=False, server_default="")
        )
        batch.create_index("ix_credit_accounts_created_by", ["created_by"], unique=False)
        batch.create_index("ix_credit_accounts_created_from", ["created_from"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("credit_accounts") as batch:
        batch.drop_index("ix_credit_accounts_created_from")
        batch.drop_index("ix_credit_accounts_created_by")
        batch.drop_column("created_from")
        batch.drop_column("created_by")
        batch.add_column(sa.Column("spent", sa.Float(), nullable=False, server_default="0"))
    op.drop_table("credit_spends")
