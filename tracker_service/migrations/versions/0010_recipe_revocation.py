"""trust: a revocation the certifier respects, and re-verification after a quarantine

``revoked_at``/``revoked_reason``: the operator revoked the recipe's certification;
it stays dark and is never certified again until the operator lifts it.
``reverify_reason``: a node that helped certify the recipe was quarantined; the
certifier verifies it again by routes without that node (dark if none passes).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02 07:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("recipes") as batch:
        batch.add_column(sa.Column("revoked_at", sa.Float(), nullable=True))
        batch.add_column(sa.Column("revoked_reason", sa.Text(), nullable=False, server_default=""))
        batch.add_column(sa.Column("reverify_reason", sa.Text(), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("recipes") as batch:
        batch.drop_column("reverify_reason")
        batch.drop_column("revoked_reason")
        batch.drop_column("revoked_at")
