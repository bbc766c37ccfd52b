"""A real private tracker process for batch jobs, and executors against it.

Private (``MESHNET_TRACKER_PRIVATE``): nodes and executors need the network's
join token. Job checks keep their defaults (probation for new executors, a
sampled share), so credit is paid only for checked work (docs/jobs.md
"Checked work"). Shared by ``tests/adversary/test_jobs_credit.py`` and
``benchmarks/credit_abuse.py``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from core.errors import TrackerRefused
from core.identity.keypair import NodeIdentity
from core.jobs.client import JobsClient
from core.jobs.credentials import CredentialStore
from core.jobs.loop import ExecutorLoop
from core.jobs.runner import SubprocessRunner
from tests.core.jobs.tracker_fixture import issue_token
from tests.tracker_service.jobs_helpers import Submitter
from tests.tracker_service.server_process import TrackerProcess
from tracker_service.store import credits as ledger
from tracker_service.store.db import Database
from tracker_service.store.tokens import add_join_token


@dataclass
class PrivateTracker:
    process: TrackerProcess
    submitter: Submitter
    db_url: str
    join_token: str

    def executor(self, folder: Path, name: str, *, runner: SubprocessRunner | None = None,
                 join_token: str | None = "") -> ExecutorLoop:  # fmt: skip
        """An executor loop with a new identity; ``join_token=""`` means the network's
        own token, None none at all (a stranger)."""
        client = JobsClient(
            self.process.url,
            NodeIdentity.generate(),
            credentials=CredentialStore(folder / f"{name}.json"),
            join_token=self.join_token if join_token == "" else join_token,
        )
        return ExecutorLoop(client, runner, workdir_base=folder / name, poll_seconds=0.1)

    def earned(self, node_id: str) -> float:
        """An identity's credit as the ledger holds it now (0 when it has none)."""
        database = Database(self.db_url)
        try:
            with database.session() as session:
                rows = ledger.leaderboard(session, kind="identity", now=time.time())
        finally:
            database.dispose()
        return sum(row.total for row in rows if row.id == node_id)


def job_quarantined(loop: ExecutorLoop) -> bool:
    """Whether the tracker refuses this executor's claims as quarantined from jobs."""
    try:
        loop.client.claim()
    except TrackerRefused as refused:
        return refused.reason == "job-quarantined"
    return False


@contextmanager
def private_jobs_tracker(folder: Path) -> Iterator[PrivateTracker]:
    """Start the tracker under ``folder`` with a submitter token and a join token."""
    home = folder / "tracker-home"
    home.mkdir(parents=True)
    db_url = f"sqlite:///{home / 'tracker.db'}"
    submitter_token = issue_token(db_url)
    database = Database(db_url)
    with database.sessions.begin() as session:
        _, join_token = add_join_token(session, label="members", now=time.time())
    database.dispose()
    process = TrackerProcess(
        home, db_url, MESHNET_TRACKER_BACKGROUND_TASKS="false", MESHNET_TRACKER_PRIVATE="true"
    ).start()
    client = httpx.Client(base_url=process.url, timeout=30.0)
    try:
        yield PrivateTracker(process, Submitter(client, submitter_token), db_url, join_token)
    finally:
        client.close()
        process.stop()
