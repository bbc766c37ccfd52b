"""Tables of the batch-job queue: jobs, their tasks, checkpoints, artifacts,
submitter tokens and the executors that claim work.

Kept apart from ``tables.py`` (same ``Base``) so the queue's schema is read in one
place; the migrations ``0004_jobs_queue.py`` and ``0014_checked_jobs.py`` must describe
exactly these tables.
A task row carries its current lease: a lease id that no longer matches the row
is superseded, which is how late heartbeats and completions are recognised.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from tracker_service.store.tables import HEX64, NODE_ID_LEN, Base, CountedTokenColumns

JOB_ID_LEN = 32
KEY_LEN = 512

# Job and task states.
QUEUED = "queued"
LEASED = "leased"
RUNNING = "running"
SUCCEEDED = "succeeded"
FAILED = "failed"

# States of one executor's result for a task (job_results).
RESULT_PENDING = "pending"  # awaiting its check; no credit yet
RESULT_PAID = "paid"
RESULT_REJECTED = "rejected"  # outvoted, or its executor was quarantined from jobs


class Job(Base):
    __tablename__ = "jobs"

    job_id: Mapped[str] = mapped_column(String(JOB_ID_LEN), primary_key=True)
    workload: Mapped[str] = mapped_column(String(64))
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    inputs: Mapped[dict[str, Any]] = mapped_column(JSON)
    unpack_inputs: Mapped[list[Any]] = mapped_column(JSON)
    checkpoint: Mapped[bool] = mapped_column(Boolean, default=False)
    state: Mapped[str] = mapped_column(String(16), default=QUEUED)
    task_count: Mapped[int] = mapped_column(Integer)
    max_attempts: Mapped[int] = mapped_column(Integer)
    lease_s: Mapped[float] = mapped_column(Float)
    timeout_s: Mapped[float] = mapped_column(Float)
    submitter_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[float] = mapped_column(Float)
    finished_at: Mapped[float | None] = mapped_column(Float, nullable=True)

    __table_args__ = (Index("ix_jobs_created", "created_at"),)


class JobTask(Base):
    __tablename__ = "job_tasks"

    task_id: Mapped[str] = mapped_column(String(JOB_ID_LEN), primary_key=True)
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.job_id", ondelete="CASCADE"))
    index: Mapped[int] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(16), default=QUEUED)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    # Backoff after a failure: not claimable before this time.
    not_before: Mapped[float] = mapped_column(Float, default=0.0)
    lease_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    lease_deadline: Mapped[float | None] = mapped_column(Float, nullable=True)
    node_id: Mapped[str | None] = mapped_column(String(NODE_ID_LEN), nullable=True)
    last_error: Mapped[str] = mapped_column(Text, default="")
    metrics_sha256: Mapped[str | None] = mapped_column(String(HEX64), nullable=True)
    claimed_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    finished_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    # Checked work: each run of the task is a round (0 first, then checks), written under
    # its own output prefix; a checked task needs two agreeing results of distinct executors.
    round: Mapped[int] = mapped_column(Integer, default=0)
    needs_check: Mapped[bool] = mapped_column(Boolean, default=False)
    # The round whose outputs are the task's result (the agreeing majority's).
    result_round: Mapped[int | None] = mapped_column(Integer, nullable=True)

    __table_args__ = (
        Index("ix_job_tasks_claim", "state", "not_before"),
        Index("ix_job_tasks_job", "job_id", "index"),
        Index("ix_job_tasks_lease", "lease_id"),
    )


class JobCheckpoint(Base):
    """A registered part (committed False) or a committed single-step manifest."""

    __tablename__ = "job_checkpoints"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    task_id: Mapped[str] = mapped_column(ForeignKey("job_tasks.task_id", ondelete="CASCADE"))
    step: Mapped[int] = mapped_column(BigInteger)
    lease_id: Mapped[str] = mapped_column(String(64))
    parts: Mapped[list[Any]] = mapped_column(JSON)
    manifest_uri: Mapped[str] = mapped_column(String(KEY_LEN), default="")
    committed: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[float] = mapped_column(Float)
    # A check resumes only from its own round's checkpoints, never from the run it checks.
    round: Mapped[int] = mapped_column(Integer, default=0)

    __table_args__ = (Index("ix_job_checkpoints_task", "task_id", "committed", "step"),)


class Artifact(Base):
    """A key naming content-addressed bytes (the blob lives under its SHA-256)."""

    __tablename__ = "artifacts"

    key: Mapped[str] = mapped_column(String(KEY_LEN), primary_key=True)
    sha256: Mapped[str] = mapped_column(String(HEX64))
    size_bytes: Mapped[int] = mapped_column(BigInteger)
    uploaded_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[float] = mapped_column(Float)


class SubmitterToken(CountedTokenColumns, Base):
    """Who may submit jobs and read their results; only the SHA-256 is stored."""

    __tablename__ = "submitter_tokens"


class JobExecutor(Base):
    """A node that runs batch work: its key, session credential (hashed) and liveness."""

    __tablename__ = "job_executors"

    node_id: Mapped[str] = mapped_column(String(NODE_ID_LEN), primary_key=True)
    public_key_b64: Mapped[str] = mapped_column(String(64))
    session_hash: Mapped[str] = mapped_column(String(HEX64))
    session_expires_at: Mapped[float] = mapped_column(Float)
    registered_at: Mapped[float] = mapped_column(Float)
    last_seen_at: Mapped[float] = mapped_column(Float)
    tasks_done: Mapped[int] = mapped_column(Integer, default=0)
    # Results of this executor that a check confirmed; below the probation count every
    # task it runs is checked.
    checks_passed: Mapped[int] = mapped_column(Integer, default=0)
    # Outvoted in a check: no more claims, and its pending results are rejected.
    quarantined_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    quarantine_reason: Mapped[str] = mapped_column(Text, default="")


class JobResult(Base):
    """One executor's completed run of a task (one round), and whether it was paid."""

    __tablename__ = "job_results"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    task_id: Mapped[str] = mapped_column(ForeignKey("job_tasks.task_id", ondelete="CASCADE"))
    node_id: Mapped[str] = mapped_column(String(NODE_ID_LEN))
    round: Mapped[int] = mapped_column(Integer)
    metrics_sha256: Mapped[str] = mapped_column(String(HEX64))
    # The parsed metrics.json (None when it is not JSON or too large to compare).
    metrics: Mapped[Any] = mapped_column(JSON, nullable=True)
    state: Mapped[str] = mapped_column(String(16), default=RESULT_PENDING)
    created_at: Mapped[float] = mapped_column(Float)

    __table_args__ = (
        Index("ix_job_results_task", "task_id", "node_id"),
        Index("ix_job_results_node", "node_id", "state"),
    )
