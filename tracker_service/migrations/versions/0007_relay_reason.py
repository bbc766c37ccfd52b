"""relay: why a node serves through a relay, and the address it registered from

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 18:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("nodes") as batch:
        batch.add_column(sa.Column("relay_reason", sa.Text(), nullable=False, server_default=""))
        batch.add_column(
            sa.Column("relayed_from", sa.String(64), nullable=False, server_default="")
        )


def downgrade() -> None:
    with op.batch_alter_table("nodes") as batch:
        batch.drop_column("relayed_from")
        batch.drop_column("relay_reason")
