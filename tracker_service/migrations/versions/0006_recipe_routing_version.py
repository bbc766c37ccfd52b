"""scale: a recipe's routing version, bumped when its routable node set changes

Route planners keep each fingerprint's candidate list in memory and re-read it
when this number moves (tracker_service/services/candidate_cache.py); every worker
process sees the same number, so a change made by one invalidates all.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 18:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("recipes") as batch:
        batch.add_column(
            sa.Column("routing_version", sa.Integer(), nullable=False, server_default="0")
        )


def downgrade() -> None:
    with op.batch_alter_table("recipes") as batch:
        batch.drop_column("routing_version")
