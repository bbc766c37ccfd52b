"""trust: evidence keeps synthetic; a recipe's failure has its own field; node quarantine

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 16:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("certification_evidence") as batch:
        batch.add_column(
            sa.Column("synthetic", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    with op.batch_alter_table("recipes") as batch:
        batch.add_column(sa.Column("last_failure", sa.Text(), nullable=False, server_default=""))
    with op.batch_alter_table("nodes") as batch:
        batch.add_column(sa.Column("quarantine_evidence", sa.JSON(), nullable=True))
        batch.add_column(
            sa.Column("audits_passed", sa.Integer(), nullable=False, server_default="0")
        )


def downgrade() -> None:
    with op.batch_alter_table("nodes") as batch:
        batch.drop_column("audits_passed")
        batch.drop_column("quarantine_evidence")
    with op.batch_alter_table("recipes") as batch:
        batch.drop_column("last_failure")
    with op.batch_alter_table("certification_evidence") as batch:
        batch.drop_column("synthetic")
