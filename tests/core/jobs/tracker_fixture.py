"""A real tracker process with a submitter token, for the executor's tests."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.tracker_service.jobs_helpers import UNCHECKED_JOBS_ENV, Submitter
from tests.tracker_service.server_process import TrackerProcess
from tracker_service.store.db import Database
from tracker_service.store.submitters import add_submitter_token


@dataclass
class LiveTracker:
    process: TrackerProcess
    submitter: Submitter
    db_url: str

    @property
    def url(self) -> str:
        return self.process.url

    def wait_for_job(self, job_id: str, timeout_s: float = 60.0) -> dict[str, object]:
        deadline = time.monotonic() + timeout_s
        while True:
            shown = self.submitter.show(job_id)
            if shown["state"] in ("succeeded", "failed") or time.monotonic() > deadline:
                return shown
            time.sleep(0.2)


def issue_token(db_url: str) -> str:
    database = Database(db_url)
    try:
        database.migrate()
        with database.sessions.begin() as session:
            _, token = add_submitter_token(session, label="tests", now=time.time())
        return token
    finally:
        database.dispose()


@pytest.fixture
def live_tracker(tmp_path: Path) -> Iterator[LiveTracker]:
    home = tmp_path / "tracker-home"
    home.mkdir()
    db_url = f"sqlite:///{home / 'tracker.db'}"
    token = issue_token(db_url)
    process = TrackerProcess(home, db_url, MESHNET_TRACKER_BACKGROUND_TASKS="false")
    process.env.update(UNCHECKED_JOBS_ENV)
    process.start()
    client = httpx.Client(base_url=process.url, timeout=30.0)
    try:
        yield LiveTracker(process, Submitter(client, token), db_url)
    finally:
        client.close()
        process.stop()
