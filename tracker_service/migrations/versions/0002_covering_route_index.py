"""route index covers the candidate columns (index-only scans for route formation)

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 10:30:00
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_ROUTE_COLUMNS = [
    "model_artifact_digest",
    "runtime_recipe_digest",
    "state",
    "live_until",
    "reachability",
    "shard_start",
    "shard_end",
    "throughput",
    "load",
    "open_sessions",
    "node_id",
    "endpoint",
    "public_key",
]


def upgrade() -> None:
    op.drop_index("ix_nodes_fingerprint_live", table_name="nodes")
    op.create_index("ix_nodes_route", "nodes", _ROUTE_COLUMNS, unique=False)


def downgrade() -> None:
    op.drop_index("ix_nodes_route", table_name="nodes")
    op.create_index(
        "ix_nodes_fingerprint_live",
        "nodes",
        ["model_artifact_digest", "runtime_recipe_digest", "state", "live_until"],
        unique=False,
    )
