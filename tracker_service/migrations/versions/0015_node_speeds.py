"""node speeds: what the tracker measured of each node, route formation's throughput

``node_speeds``: per node and model artifact, the moving mean of the ms one layer
costs the node per token over the decode steps the tracker timed, and how many
steps that is (domain/measured_speed.py). A node's claimed throughput can only
lower it.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-05 23:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "node_speeds",
        sa.Column("model_artifact_digest", sa.String(length=64), nullable=False),
        sa.Column("node_id", sa.String(length=32), nullable=False),
        sa.Column("ms_per_layer", sa.Float(), nullable=False),
        sa.Column("steps", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("model_artifact_digest", "node_id"),
    )
    op.create_index("ix_node_speeds_node_id", "node_speeds", ["node_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_node_speeds_node_id", table_name="node_speeds")
    op.drop_table("node_speeds")
