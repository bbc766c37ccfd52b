"""credits: hourly credit per node, contributor accounts, linked identities and keys

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02 11:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "credit_buckets",
        sa.Column("node_id", sa.String(length=32), nullable=False),
        sa.Column("hour", sa.BigInteger(), nullable=False),
        sa.Column("credit", sa.Float(), nullable=False),
        sa.Column("hops", sa.BigInteger(), nullable=False),
        sa.Column("tokens", sa.BigInteger(), nullable=False),
        sa.Column("layer_tokens", sa.BigInteger(), nullable=False),
        sa.Column("job_units", sa.BigInteger(), nullable=False),
        sa.Column("own_hops", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("node_id", "hour"),
    )
    op.create_index("ix_credit_buckets_hour", "credit_buckets", ["hour"], unique=False)
    op.create_table(
        "credit_accounts",
        sa.Column("account", sa.String(length=64), nullable=False),
        sa.Column("display_name", sa.String(length=64), nullable=False),
        sa.Column("team", sa.String(length=64), nullable=False),
        sa.Column("spent", sa.Float(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("account"),
    )
    op.create_table(
        "credit_identities",
        sa.Column("node_id", sa.String(length=32), nullable=False),
        sa.Column("account", sa.String(length=64), nullable=False),
        sa.Column("linked_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("node_id"),
    )
    op.create_index("ix_credit_identities_account", "credit_identities", ["account"], unique=False)
    op.create_table(
        "credit_keys",
        sa.Column("key_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("account", sa.String(length=64), nullable=False),
        sa.Column("linked_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("key_id"),
    )
    op.create_index("ix_credit_keys_account", "credit_keys", ["account"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_credit_keys_account", table_name="credit_keys")
    op.drop_table("credit_keys")
    op.drop_index("ix_credit_identities_account", table_name="credit_identities")
    op.drop_table("credit_identities")
    op.drop_table("credit_accounts")
    op.drop_index("ix_credit_buckets_hour", table_name="credit_buckets")
    op.drop_table("credit_buckets")
