"""checked batch jobs: results per executor, check rounds, quarantine from jobs

``job_results``: each executor's completed run of a task and whether it was paid.
``job_tasks.round`` / ``needs_check`` / ``result_round``: a checked task runs on two
independent executors (a third on a disagreement) before it succeeds and pays.
``job_checkpoints.round``: a check resumes only from its own round.
``job_executors.checks_passed`` / ``quarantined_at`` / ``quarantine_reason``: probation
and the outvoted executor's quarantine from jobs (docs/jobs.md#checked-work).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-05 23:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("job_tasks") as batch:
        batch.add_column(sa.Column("round", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(
            sa.Column("needs_check", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("result_round", sa.Integer(), nullable=True))
    with op.batch_alter_table("job_checkpoints") as batch:
        batch.add_column(sa.Column("round", sa.Integer(), nullable=False, server_default="0"))
    with op.batch_alter_table("job_executors") as batch:
        batch.add_column(
            sa.Column("checks_passed", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(sa.Column("quarantined_at", sa.Float(), nullable=True))
        batch.add_column(
            sa.Column("quarantine_reason", sa.Text(), nullable=False, server_default="")
        )
    op.create_table(
        "job_results",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column(
            "task_id",
            sa.String(32),
            sa.ForeignKey("job_tasks.task_id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("node_id", sa.String(32), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("metrics_sha256", sa.String(64), nullable=False),
        sa.Column("metrics", sa.JSON(), nullable=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
    )
    op.create_index("ix_job_results_task", "job_results", ["task_id", "node_id"])
    op.create_index("ix_job_results_node", "job_results", ["node_id", "state"])


def downgrade() -> None:
    op.drop_index("ix_job_results_node", table_name="job_results")
    op.drop_index("ix_job_results_task", table_name="job_results")
    op.drop_table("job_results")
    with op.batch_alter_table("job_executors") as batch:
        batch.drop_column("quarantine_reason")
        batch.drop_column("quarantined_at")
        batch.drop_column("checks_passed")
    with op.batch_alter_table("job_checkpoints") as batch:
        batch.drop_column("round")
    with op.batch_alter_table("job_tasks") as batch:
        batch.drop_column("result_round")
        batch.drop_column("needs_check")
        batch.drop_column("round")
