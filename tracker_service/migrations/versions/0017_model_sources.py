"""model sources: the operator's allowed weights (artifact digests) per model name

The gateway serves a model name only from recipes whose model artifact digest the
operator allowed (`meshnet-tracker models allow`); a fake certified under a known
name by colluding nodes stays unserved (tracker_service/store/model_sources.py).

Revision ID: 0017
Revises: 0015
Create Date: 2026-12-05 23:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "model_sources",
        sa.Column("artifact_id", sa.String(256), primary_key=True),
        sa.Column("model_artifact_digest", sa.String(64), primary_key=True),
        sa.Column("allowed", sa.Boolean(), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("changed_at", sa.Float(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("model_sources")
