"""invites: shareable network invites (code hashed) and the identities that redeemed them

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02 07:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "invites",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        sa.Column("label", sa.String(length=256), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=True),
        sa.Column("max_uses", sa.Integer(), nullable=False),
        sa.Column("uses", sa.Integer(), nullable=False),
        sa.Column("revoked_at", sa.Float(), nullable=True),
        sa.Column("last_used_at", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("code_hash"),
    )
    op.create_table(
        "invite_redemptions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("invite_id", sa.Integer(), nullable=False),
        sa.Column("node_id", sa.String(length=32), nullable=False),
        sa.Column("join_token_id", sa.Integer(), nullable=True),
        sa.Column("redeemed_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["invite_id"], ["invites.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["join_token_id"], ["join_tokens.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("invite_id", "node_id", name="uq_invite_node"),
    )
    op.create_index(
        "ix_invite_redemptions_join_token_id",
        "invite_redemptions",
        ["join_token_id"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_invite_redemptions_join_token_id", table_name="invite_redemptions")
    op.drop_table("invite_redemptions")
    op.drop_table("invites")
