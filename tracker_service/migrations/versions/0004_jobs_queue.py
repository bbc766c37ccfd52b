"""batch jobs: jobs, tasks, checkpoints, artifacts, submitter tokens, executors

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 15:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("job_id", sa.String(32), primary_key=True),
        sa.Column("workload", sa.String(64), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("inputs", sa.JSON(), nullable=False),
        sa.Column("unpack_inputs", sa.JSON(), nullable=False),
        sa.Column("checkpoint", sa.Boolean(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("task_count", sa.Integer(), nullable=False),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("lease_s", sa.Float(), nullable=False),
        sa.Column("timeout_s", sa.Float(), nullable=False),
        sa.Column("submitter_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("finished_at", sa.Float(), nullable=True),
    )
    op.create_index("ix_jobs_created", "jobs", ["created_at"])
    op.create_table(
        "job_tasks",
        sa.Column("task_id", sa.String(32), primary_key=True),
        sa.Column(
            "job_id",
            sa.String(32),
            sa.ForeignKey("jobs.job_id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("not_before", sa.Float(), nullable=False),
        sa.Column("lease_id", sa.String(64), nullable=True),
        sa.Column("lease_deadline", sa.Float(), nullable=True),
        sa.Column("node_id", sa.String(32), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=False),
        sa.Column("metrics_sha256", sa.String(64), nullable=True),
        sa.Column("claimed_at", sa.Float(), nullable=True),
        sa.Column("finished_at", sa.Float(), nullable=True),
    )
    op.create_index("ix_job_tasks_claim", "job_tasks", ["state", "not_before"])
    op.create_index("ix_job_tasks_job", "job_tasks", ["job_id", "index"])
    op.create_index("ix_job_tasks_lease", "job_tasks", ["lease_id"])
    op.create_table(
        "job_checkpoints",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column(
            "task_id",
            sa.String(32),
            sa.ForeignKey("job_tasks.task_id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("step", sa.BigInteger(), nullable=False),
        sa.Column("lease_id", sa.String(64), nullable=False),
        sa.Column("parts", sa.JSON(), nullable=False),
        sa.Column("manifest_uri", sa.String(512), nullable=False),
        sa.Column("committed", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
    )
    op.create_index("ix_job_checkpoints_task", "job_checkpoints", ["task_id", "committed", "step"])
    op.create_table(
        "artifacts",
        sa.Column("key", sa.String(512), primary_key=True),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("size_bytes", sa.BigInteger(), nullable=False),
        sa.Column("uploaded_by", sa.String(64), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
    )
    op.create_table(
        "submitter_tokens",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("label", sa.String(256), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("revoked_at", sa.Float(), nullable=True),
        sa.Column("last_used_at", sa.Float(), nullable=True),
        sa.Column("uses", sa.Integer(), nullable=False),
    )
    op.create_table(
        "job_executors",
        sa.Column("node_id", sa.String(32), primary_key=True),
        sa.Column("public_key_b64", sa.String(64), nullable=False),
        sa.Column("session_hash", sa.String(64), nullable=False),
        sa.Column("session_expires_at", sa.Float(), nullable=False),
        sa.Column("registered_at", sa.Float(), nullable=False),
        sa.Column("last_seen_at", sa.Float(), nullable=False),
        sa.Column("tasks_done", sa.Integer(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("job_executors")
    op.drop_table("submitter_tokens")
    op.drop_table("artifacts")
    op.drop_index("ix_job_checkpoints_task", table_name="job_checkpoints")
    op.drop_table("job_checkpoints")
    op.drop_index("ix_job_tasks_lease", table_name="job_tasks")
    op.drop_index("ix_job_tasks_job", table_name="job_tasks")
    op.drop_index("ix_job_tasks_claim", table_name="job_tasks")
    op.drop_table("job_tasks")
    op.drop_index("ix_jobs_created", table_name="jobs")
    op.drop_table("jobs")
