"""nodes: an indexed host the per-address cap counts by (no LIKE scan per registration)

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 21:10:00
"""

from __future__ import annotations

from urllib.parse import urlsplit

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

_NODES = sa.table(
    "nodes",
    sa.column("node_id", sa.String),
    sa.column("endpoint", sa.String),
    sa.column("relayed_from", sa.String),
    sa.column("cap_host", sa.String),
)


def _cap_host(endpoint: str, relayed_from: str) -> str:
    # A frozen copy of store.node_caps.cap_host as of this revision: a migration must
    # keep doing what it did when it shipped, whatever the code does later.
    if relayed_from:
        return relayed_from.lower()
    try:
        return urlsplit(endpoint).hostname or ""
    except ValueError:
        return ""


def upgrade() -> None:
    with op.batch_alter_table("nodes") as batch:
        batch.add_column(sa.Column("cap_host", sa.String(512), nullable=False, server_default=""))
    op.create_index("ix_nodes_cap_host", "nodes", ["cap_host", "state", "live_until"], unique=False)
    connection = op.get_bind()
    rows = connection.execute(
        sa.select(_NODES.c.node_id, _NODES.c.endpoint, _NODES.c.relayed_from)
    ).all()
    updates = [
        {"key": node_id, "host": _cap_host(endpoint or "", relayed_from or "")}
        for node_id, endpoint, relayed_from in rows
    ]
    if updates:
        connection.execute(
            _NODES.update()
            .where(_NODES.c.node_id == sa.bindparam("key"))
            .values(cap_host=sa.bindparam("host")),
            updates,
        )


def downgrade() -> None:
    op.drop_index("ix_nodes_cap_host", table_name="nodes")
    with op.batch_alter_table("nodes") as batch:
        batch.drop_column("cap_host")
