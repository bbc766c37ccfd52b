"""Bodies and answers of the batch-job API (``/api/v1/jobs``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
HEX64_PATTERN = r"^[0-9a-f]{64}$"


class JobCreate(BaseModel):
    workload: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")
    params: dict[str, Any] = Field(default_factory=dict)
    inputs: dict[str, str] = Field(default_factory=dict, description="input name -> artifact key")
    unpack_inputs: list[str] = Field(default_factory=list)
    tasks: int = Field(default=1, ge=1, le=10_000)
    checkpoint: bool = False
    max_attempts: int = Field(default=3, ge=1, le=100)
    lease_seconds: float = Field(default=30.0, ge=1.0, le=86_400.0)
    timeout_seconds: float = Field(default=600.0, ge=1.0, le=7 * 86_400.0)


class JobCreated(BaseModel):
    job_id: str
    task_ids: list[str]


class TaskPublic(BaseModel):
    task_id: str
    index: int
    state: str
    attempts: int
    node_id: str | None
    error: str
    lease_deadline: float | None
    finished_at: float | None
    outputs: list[dict[str, Any]] = Field(default_factory=list)
    # Checked work (docs/jobs.md#checked-work): whether this task runs on two executors,
    # which round it is in, and where its agreed result lies once it succeeded.
    checked: bool = False
    round: int = 0
    result_prefix: str | None = None


class JobPublic(BaseModel):
    job_id: str
    workload: str
    state: str
    params: dict[str, Any]
    inputs: dict[str, str]
    unpack_inputs: list[str]
    checkpoint: bool
    task_count: int
    max_attempts: int
    created_at: float
    finished_at: float | None
    counts: dict[str, int] = Field(default_factory=dict)
    tasks: list[TaskPublic] = Field(default_factory=list)


class JobList(BaseModel):
    jobs: list[JobPublic]


class ExecutorRegister(BaseModel):
    public_key: str
    label: str = Field(default="", max_length=256)


class ExecutorSession(BaseModel):
    node_id: str
    session_token: str
    session_expires_at: float
    heartbeat_interval_s: float


class LeasePublic(BaseModel):
    lease_id: str
    job_id: str
    task_id: str
    attempt_number: int
    deadline: float
    lease_seconds: float
    payload: dict[str, Any]


class LeaseRenewed(BaseModel):
    lease_id: str
    deadline: float


class CompleteCreate(BaseModel):
    metrics_sha256: str = Field(pattern=HEX64_PATTERN)


class FailCreate(BaseModel):
    error: str = Field(max_length=4000)


class TaskOutcome(BaseModel):
    task_id: str
    state: str
    attempts: int
    accepted: bool


class CheckpointPart(BaseModel):
    key: str = Field(max_length=512)
    sha256: str = Field(pattern=HEX64_PATTERN)
    size_bytes: int = Field(ge=0)


class CheckpointPartCreate(BaseModel):
    step: int = Field(ge=0, le=2**62)
    part: CheckpointPart


class CheckpointCommitCreate(BaseModel):
    step: int = Field(ge=0, le=2**62)
    parts: list[CheckpointPart] = Field(min_length=1, max_length=64)
    manifest_uri: str = Field(default="", max_length=512)


class CheckpointPublic(BaseModel):
    task_id: str
    step: int
    parts: list[dict[str, Any]]
    manifest_uri: str
    created_at: float


class ArtifactPublic(BaseModel):
    key: str
    sha256: str
    size_bytes: int
