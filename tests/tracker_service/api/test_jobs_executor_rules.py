"""Two executor rules of the job API: a failed task goes to another executor first
(the failed executor's cool-down), and an executor's expired session credential is
refused with its own reason and never counted as a failed authentication guess."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.tracker_service.conftest import make_settings
from tests.tracker_service.jobs_helpers import (
    FakeExecutor,
    Submitter,
    issue_submitter_token,
    without_job_checks,
)
from tracker_service.app import create_app
from tracker_service.store.job_tables import JobExecutor, JobTask

THROTTLE = 3  # failed authentications a minute before an address is throttled


def _client(tmp_path: Path, **overrides: Any) -> Iterator[TestClient]:
    app = create_app(make_settings(tmp_path, background_tasks=False, **overrides))
    with TestClient(app) as client:
        yield client
    app.state.tracker.database.dispose()


@pytest.fixture(autouse=True)
def _unchecked_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    without_job_checks(monkeypatch)


@pytest.fixture
def app_client(tmp_path: Path) -> Iterator[TestClient]:
    yield from _client(tmp_path)


def _db(client: TestClient) -> Any:
    return client.app.state.tracker.database  # type: ignore[attr-defined]


def _backoff_over(client: TestClient, task_id: str, seconds_ago: float) -> None:
    """The failed task's retry backoff ended `seconds_ago` (instead of waiting it out)."""
    with _db(client).sessions.begin() as session:
        task = session.get(JobTask, task_id)
        assert task is not None and task.state == "queued"
        task.not_before = time.time() - seconds_ago


def _last_seen(client: TestClient, executor: FakeExecutor, seconds_ago: float) -> None:
    with _db(client).sessions.begin() as session:
        row = session.get(JobExecutor, executor.node.node_id)
        assert row is not None
        row.last_seen_at = time.time() - seconds_ago


def _fail_one_task(client: TestClient, failing: FakeExecutor) -> str:
    Submitter(client, issue_submitter_token(_db(client))).submit(tasks=1, max_attempts=5)
    lease = failing.claim().json()
    failed = failing.post(f"/api/v1/jobs/leases/{lease['lease_id']}/fail", {"error": "boom"})
    assert failed.json()["state"] == "queued"
    task_id: str = lease["task_id"]
    return task_id


def _executors(client: TestClient, count: int) -> list[FakeExecutor]:
    executors = [FakeExecutor(client) for _ in range(count)]
    for executor in executors:
        assert executor.register().status_code == 200
    return executors


def test_a_failed_task_goes_to_another_live_executor_not_back_to_the_one_that_failed_it(
    app_client: TestClient,
) -> None:
    failing, other = _executors(app_client, 2)
    task_id = _fail_one_task(app_client, failing)
    _backoff_over(app_client, task_id, seconds_ago=1.0)
    assert failing.claim().status_code == 204  # cooling down for this task
    second = other.claim().json()
    assert second["task_id"] == task_id and second["attempt_number"] == 2
    assert other.finish(second).status_code == 200


def test_after_the_cool_down_the_failed_executor_may_claim_it_again(
    app_client: TestClient,
) -> None:
    failing, _other = _executors(app_client, 2)
    task_id = _fail_one_task(app_client, failing)
    _backoff_over(app_client, task_id, seconds_ago=61.0)  # the default cool-down is 60 s
    assert failing.claim().json()["task_id"] == task_id


def test_with_no_other_live_executor_the_failed_one_retries_after_its_backoff(
    app_client: TestClient,
) -> None:
    failing, gone = _executors(app_client, 2)
    task_id = _fail_one_task(app_client, failing)
    _last_seen(app_client, gone, seconds_ago=3600.0)  # silent for an hour: not live
    _backoff_over(app_client, task_id, seconds_ago=1.0)
    assert failing.claim().json()["task_id"] == task_id


def test_the_cool_down_is_a_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MESHNET_TRACKER_JOBS_FAILED_EXECUTOR_COOLDOWN_S", "0")
    for client in _client(tmp_path):
        failing, _other = _executors(client, 2)
        task_id = _fail_one_task(client, failing)
        _backoff_over(client, task_id, seconds_ago=1.0)
        assert failing.claim().json()["task_id"] == task_id  # no cool-down: straight back


def _expire_session(client: TestClient, executor: FakeExecutor) -> None:
    with _db(client).sessions.begin() as session:
        row = session.get(JobExecutor, executor.node.node_id)
        assert row is not None
        row.session_expires_at = time.time() - 1


def test_an_expired_session_is_refused_as_expired_and_a_wrong_one_as_invalid(
    app_client: TestClient,
) -> None:
    (executor,) = _executors(app_client, 1)
    _expire_session(app_client, executor)
    expired = executor.claim()
    assert expired.status_code == 401 and expired.json()["reason"] == "session-expired"
    real = executor.session_token
    executor.session_token = real[:-4] + "AAAA"
    wrong = executor.claim()
    assert wrong.status_code == 401 and wrong.json()["reason"] == "session-invalid"
    executor.session_token = real
    assert executor.register().status_code == 200  # registering again gives a fresh one
    assert executor.claim().status_code == 204


def test_expired_credentials_do_not_count_against_the_address_but_wrong_ones_do(
    tmp_path: Path,
) -> None:
    for client in _client(tmp_path, failed_auth_per_minute_per_address=THROTTLE):
        (executor,) = _executors(client, 1)
        _expire_session(client, executor)
        for _ in range(THROTTLE * 3):
            assert executor.claim().json()["reason"] == "session-expired"
        assert executor.register().status_code == 200
        assert executor.claim().status_code == 204  # not throttled
        executor.session_token = "mne_guessed"
        for _ in range(THROTTLE):
            assert executor.claim().status_code == 401
        assert executor.claim().status_code == 429  # guesses still cost
