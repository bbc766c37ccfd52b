"""Settings of the batch-job queue (prefix ``MESHNET_TRACKER_JOBS_``) and the
per-app state its routes share (blob store), installed by :func:`install_jobs`.

Kept out of ``config.Settings`` so the queue's knobs are read in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fastapi import Request
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from tracker_service.config import MIB, Settings
from tracker_service.services.job_queue import BlobStore

ARTIFACTS_PATH_PREFIX = "/api/v1/jobs/artifacts/"


class JobSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MESHNET_TRACKER_JOBS_", extra="ignore")

    # Where blobs live; empty means <data_dir>/artifacts.
    artifacts_dir: str = ""
    # The largest single artifact (input, output or checkpoint part) the tracker keeps.
    artifact_max_bytes: int = Field(default=64 * MIB, ge=1024)
    executor_session_ttl_s: float = Field(default=3600.0, gt=0)
    executor_heartbeat_s: float = Field(default=5.0, gt=0)
    # A task that failed (or whose lease expired) on an executor is not given back to
    # that executor for this long after its retry backoff, while another executor is
    # live (seen within 3 heartbeats): a failure is retried elsewhere (docs/jobs.md).
    failed_executor_cooldown_s: float = Field(default=60.0, ge=0)
    # Checked work (docs/jobs.md#checked-work): the share of tasks run on a second
    # executor at random, and how many confirmed results end an executor's probation
    # (until then every task it runs is checked). Credit is paid only for checked or
    # unsampled results; a metrics.json over metrics_max_bytes is compared byte for byte.
    check_share: float = Field(default=0.1, ge=0.0, le=1.0)
    probation_tasks: int = Field(default=3, ge=0)
    metrics_max_bytes: int = Field(default=1 * MIB, ge=1024)


@dataclass
class JobsState:
    settings: JobSettings
    blobs: BlobStore


def build_jobs_state(settings: Settings, job_settings: JobSettings | None = None) -> JobsState:
    job_settings = job_settings or JobSettings()
    root = (
        Path(job_settings.artifacts_dir)
        if job_settings.artifacts_dir
        else settings.data_dir / "artifacts"
    )
    return JobsState(job_settings, BlobStore(root, job_settings.artifact_max_bytes))


def jobs_state(request: Request) -> JobsState:
    state: JobsState = request.app.state.jobs
    return state
