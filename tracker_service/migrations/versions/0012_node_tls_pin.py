"""data plane TLS: the pin of each node's certificate, signed by its identity key

``tls_pin``: SHA-256 hex of the node's data-plane certificate key (SubjectPublicKeyInfo),
admitted with the node's signature at registration and published in route plans, so
every client checks the node's certificate against it (docs/wire.md#tls).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02 11:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("nodes") as batch:
        batch.add_column(sa.Column("tls_pin", sa.String(64), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("nodes") as batch:
        batch.drop_column("tls_pin")
