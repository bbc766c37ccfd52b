"""gateway: API keys (hashed) with optional per-key limits; recipes' chat template pin

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 15:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("label", sa.String(length=256), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("revoked_at", sa.Float(), nullable=True),
        sa.Column("last_used_at", sa.Float(), nullable=True),
        sa.Column("requests_per_minute", sa.Integer(), nullable=True),
        sa.Column("tokens_per_minute", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("key_hash"),
    )
    with op.batch_alter_table("recipes") as batch:
        batch.add_column(sa.Column("chat_template_sha256", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("recipes") as batch:
        batch.drop_column("chat_template_sha256")
    op.drop_table("api_keys")
