"""Who may write and read which job artifact (docs/jobs.md): the upload and download
use cases behind api/routes/job_artifacts.py.

A submitter writes under ``inputs/`` and reads anything; an executor writes only
under the prefix of the task it holds a *current* lease on, and reads that lease's
inputs and its task's own prefix.
"""

from __future__ import annotations

import time

from tracker_service.errors import ArtifactRefusal
from tracker_service.store import jobs as queue
from tracker_service.store.artifacts import (
    KEY_PATTERN,
    BlobStore,
    check_key,
    check_sha256,
    find_artifact,
    record_artifact,
)
from tracker_service.store.db import Database
from tracker_service.store.job_tables import KEY_LEN, Artifact

__all__ = ["KEY_LEN", "KEY_PATTERN", "check_key", "check_sha256"]

HEADER_LEASE = "X-Meshnet-Lease"
WRONG_PREFIX = "artifact-prefix-refused"


def store(
    database: Database,
    blobs: BlobStore,
    key: str,
    data: bytes,
    sha256: str,
    uploader: str,
    lease_id: str | None,
) -> Artifact:
    """Blocking: keep `data` under `key` (an executor only under its current lease's
    prefix); ArtifactRefusal or QueueRefusal say why not."""
    now = time.time()
    with database.sessions.begin() as session:
        if lease_id is not None:
            task = queue.lease_for_upload(session, lease_id, now=now)
            prefix = queue.output_prefix(task.job_id, task.task_id, task.round)
            if not queue.lease_may_write(task.job_id, task, key) or task.node_id != (
                uploader.removeprefix("node:")
            ):
                raise ArtifactRefusal(
                    WRONG_PREFIX,
                    f"this lease may write only under {prefix}; {key!r} is outside it",
                    403,
                )
        digest, size = blobs.put(data, sha256)
        row = record_artifact(session, key, digest, size, uploaded_by=uploader, now=now)
        return row


def readable(database: Database, key: str, reader: str, lease_id: str | None) -> tuple[str, int]:
    """(sha256, size) of `key` if `reader` may read it. A submitter reads anything; an
    executor only its current lease's inputs and its task's own prefix (checkpoints)."""
    now = time.time()
    with database.session() as session:
        if reader.startswith("node:"):
            if not lease_id:
                raise ArtifactRefusal(
                    WRONG_PREFIX, f"an executor's download names its lease in {HEADER_LEASE}", 403
                )
            task = queue.lease_for_upload(session, lease_id, now=now)
            job, _ = queue.get_job(session, task.job_id)
            own = key.startswith(queue.output_prefix(job.job_id, task.task_id, task.round))
            if task.node_id != reader.removeprefix("node:") or (
                not own and key not in job.inputs.values()
            ):
                raise ArtifactRefusal(
                    WRONG_PREFIX,
                    f"this lease may read its job's inputs and {key!r} is not one",
                    403,
                )
        row = find_artifact(session, key)
        return row.sha256, row.size_bytes
