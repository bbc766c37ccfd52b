"""trust: evidence keeps its synthetic flag; a recipe's failure has its own field

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


def downgrade() -> None:
    with op.batch_alter_table("recipes") as batch:
        batch.drop_column("last_failure")
    with op.batch_alter_table("certification_evidence") as batch:
        batch.drop_column("synthetic")
