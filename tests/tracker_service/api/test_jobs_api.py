"""The job queue over HTTP: submitter tokens, executor auth, leases, artifacts, checkpoints."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.tracker_service.conftest import make_settings
from tests.tracker_service.jobs_helpers import (
    FakeExecutor,
    Submitter,
    issue_submitter_token,
    without_job_checks,
)
from tests.tracker_service.store_backends import BACKENDS, reset_postgres
from tracker_service.app import create_app
from tracker_service.store.job_tables import JobTask


@pytest.fixture(autouse=True)
def _unchecked_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    without_job_checks(monkeypatch)


@pytest.fixture(params=BACKENDS)
def app_client(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[TestClient]:
    monkeypatch.setenv("MESHNET_TRACKER_JOBS_ARTIFACT_MAX_BYTES", str(64 * 1024))
    db = "" if request.param == "sqlite" else reset_postgres()  # a clean schema per test
    app = create_app(make_settings(tmp_path, background_tasks=False, db=db))
    with TestClient(app) as client:
        yield client
    app.state.tracker.database.dispose()


@pytest.fixture
def submitter(app_client: TestClient) -> Submitter:
    return Submitter(app_client, issue_submitter_token(app_client.app.state.tracker.database))  # type: ignore[attr-defined]


@pytest.fixture
def executor(app_client: TestClient) -> FakeExecutor:
    ex = FakeExecutor(app_client)
    assert ex.register().status_code == 200
    return ex


def _expire(client: TestClient, task_id: str) -> None:
    """Move a lease's deadline into the past (what a dead executor's silence does)."""
    with client.app.state.tracker.database.sessions.begin() as session:  # type: ignore[attr-defined]
        task = session.get(JobTask, task_id)
        assert task is not None
        task.lease_deadline = time.time() - 1
        task.not_before = 0.0


def test_submitting_needs_a_valid_submitter_token(app_client: TestClient) -> None:
    r = app_client.post("/api/v1/jobs", json={"workload": "selftest"})
    assert r.status_code == 401 and r.json()["reason"] == "submitter-token-required"
    bad = app_client.post(
        "/api/v1/jobs", json={"workload": "selftest"}, headers={"Authorization": "Bearer mns_x"}
    )
    assert bad.status_code == 401


def test_claim_needs_a_registered_node(app_client: TestClient) -> None:
    stranger = FakeExecutor(app_client)
    assert stranger.signed_post("/api/v1/jobs/claim", {}).status_code == 401
    stranger.session_token = "mne_forged"
    assert stranger.claim().status_code == 401


def test_signed_claim_works_without_the_session_credential(
    submitter: Submitter, executor: FakeExecutor
) -> None:
    job_id = submitter.submit(tasks=1).json()["job_id"]
    r = executor.signed_post("/api/v1/jobs/claim", {})
    assert r.status_code == 200 and r.json()["job_id"] == job_id


def test_claim_leases_each_task_once_with_deadline_and_attempt(
    submitter: Submitter, executor: FakeExecutor
) -> None:
    job = submitter.submit(tasks=2, lease_seconds=30).json()
    first, second = executor.claim().json(), executor.claim().json()
    assert {first["task_id"], second["task_id"]} == set(job["task_ids"])
    assert first["attempt_number"] == 1 and first["deadline"] > time.time()
    assert first["payload"]["output_prefix"] == f"jobs/{job['job_id']}/{first['task_id']}/"
    assert executor.claim().status_code == 204


def test_completion_is_accepted_once_and_a_duplicate_changes_nothing(
    submitter: Submitter, executor: FakeExecutor
) -> None:
    job_id = submitter.submit(tasks=1).json()["job_id"]
    lease = executor.claim().json()
    done = executor.finish(lease)
    assert done.status_code == 200
    again = executor.post(
        f"/api/v1/jobs/leases/{lease['lease_id']}/complete",
        {"metrics_sha256": hashlib.sha256(b'{"ok": true}').hexdigest()},
    )
    assert again.status_code == 409 and again.json()["reason"] == "completion-refused"
    shown = submitter.show(job_id)
    assert shown["state"] == "succeeded" and shown["tasks"][0]["attempts"] == 1


def test_an_expired_lease_answers_410_and_its_late_completion_is_refused(
    app_client: TestClient, submitter: Submitter, executor: FakeExecutor
) -> None:
    job_id = submitter.submit(tasks=1, max_attempts=3).json()["job_id"]
    lease = executor.claim().json()
    _expire(app_client, lease["task_id"])
    hb = executor.post(f"/api/v1/jobs/leases/{lease['lease_id']}/heartbeat")
    assert hb.status_code == 410 and hb.json()["reason"] == "lease-lost"
    other = FakeExecutor(app_client)
    other.register()
    _expire(app_client, lease["task_id"])  # the requeue's backoff, skipped
    second = other.claim().json()
    assert second["task_id"] == lease["task_id"] and second["attempt_number"] == 2
    # The first holder's upload and completion are both refused: nothing is committed.
    assert (
        executor.upload(
            lease["lease_id"], lease["payload"]["output_prefix"] + "x", b"1"
        ).status_code
        == 410
    )
    late = executor.post(
        f"/api/v1/jobs/leases/{lease['lease_id']}/complete", {"metrics_sha256": "0" * 64}
    )
    assert late.status_code == 409
    assert submitter.show(job_id)["tasks"][0]["state"] == "leased"
    assert other.finish(second).status_code == 200


def test_failures_requeue_with_backoff_then_fail_with_the_last_error(
    app_client: TestClient, submitter: Submitter, executor: FakeExecutor
) -> None:
    job_id = submitter.submit(tasks=1, max_attempts=2).json()["job_id"]
    lease = executor.claim().json()
    r = executor.post(f"/api/v1/jobs/leases/{lease['lease_id']}/fail", {"error": "boom 1"})
    assert r.json()["state"] == "queued"
    assert executor.claim().status_code == 204  # backing off
    _expire(app_client, lease["task_id"])
    lease2 = executor.claim().json()
    r = executor.post(f"/api/v1/jobs/leases/{lease2['lease_id']}/fail", {"error": "boom 2"})
    assert r.json()["state"] == "failed"
    shown = submitter.show(job_id)
    assert shown["state"] == "failed"
    assert shown["tasks"][0]["error"] == "boom 2" and shown["tasks"][0]["attempts"] == 2


def test_uploads_are_verified_against_their_hash_and_size(
    submitter: Submitter, executor: FakeExecutor
) -> None:
    submitter.submit(tasks=1)
    lease = executor.claim().json()
    prefix = lease["payload"]["output_prefix"]
    wrong = executor.upload(lease["lease_id"], prefix + "a.txt", b"abc", sha="1" * 64)
    assert wrong.status_code == 400 and wrong.json()["reason"] == "hash-mismatch"
    big = executor.upload(lease["lease_id"], prefix + "big.bin", b"x" * (65 * 1024))
    assert big.status_code == 413


def test_an_executor_writes_only_under_its_task_prefix(
    submitter: Submitter, executor: FakeExecutor
) -> None:
    submitter.submit(tasks=2)
    lease, other = executor.claim().json(), executor.claim().json()
    outside = executor.upload(lease["lease_id"], other["payload"]["output_prefix"] + "x", b"1")
    assert outside.status_code == 403
    traversal = executor.upload(lease["lease_id"], lease["payload"]["output_prefix"] + "../x", b"1")
    assert traversal.status_code in (400, 403, 404)


def test_artifacts_are_content_addressed_and_download_with_their_hash(
    app_client: TestClient, submitter: Submitter, executor: FakeExecutor
) -> None:
    key = submitter.upload_input("data.txt", b"hello")
    submitter.submit(inputs={"data": key})
    lease = executor.claim().json()
    r = app_client.get(
        f"/api/v1/jobs/artifacts/{key}",
        headers={**executor.session, "X-Meshnet-Lease": lease["lease_id"]},
    )
    assert r.content == b"hello"
    assert r.headers["X-Meshnet-Sha256"] == hashlib.sha256(b"hello").hexdigest()
    blobs = list((Path(str(app_client.app.state.jobs.blobs.root)) / "sha256").rglob("*"))  # type: ignore[attr-defined]
    assert any(p.name == hashlib.sha256(b"hello").hexdigest() for p in blobs)
    assert app_client.get(f"/api/v1/jobs/artifacts/{key}").status_code == 401


def test_an_executor_reads_only_what_its_current_lease_needs(
    app_client: TestClient, submitter: Submitter, executor: FakeExecutor
) -> None:
    mine = submitter.upload_input("mine.txt", b"mine")
    other = submitter.upload_input("other.txt", b"other job's private input")
    submitter.submit(inputs={"data": mine})
    lease = executor.claim().json()
    headers = {**executor.session, "X-Meshnet-Lease": lease["lease_id"]}
    assert app_client.get(f"/api/v1/jobs/artifacts/{mine}", headers=headers).status_code == 200
    assert app_client.get(f"/api/v1/jobs/artifacts/{other}", headers=headers).status_code == 403
    no_lease = app_client.get(f"/api/v1/jobs/artifacts/{mine}", headers=executor.session)
    assert no_lease.status_code == 403
    assert (
        submitter.client.get(f"/api/v1/jobs/artifacts/{other}", headers=submitter.auth).status_code
        == 200
    )


def test_a_job_naming_a_missing_input_is_refused(submitter: Submitter) -> None:
    r = submitter.submit(inputs={"data": "inputs/nope/data.txt"})
    assert r.status_code == 422 and r.json()["reason"] == "missing-artifact"


def test_checkpoints_register_commit_and_the_latest_survives_the_attempt(
    app_client: TestClient, submitter: Submitter, executor: FakeExecutor
) -> None:
    job_id = submitter.submit(tasks=1, checkpoint=True).json()["job_id"]
    lease = executor.claim().json()
    base = f"/api/v1/jobs/leases/{lease['lease_id']}/checkpoints"
    for step in (1, 2):
        data = f'{{"step": {step}}}'.encode()
        key = f"{lease['payload']['output_prefix']}ckpt/step-{step}.json"
        assert executor.upload(lease["lease_id"], key, data).status_code == 200
        part = {"key": key, "sha256": hashlib.sha256(data).hexdigest(), "size_bytes": len(data)}
        unregistered = executor.post(base + "/commit", {"step": step, "parts": [part]})
        assert unregistered.status_code == 422
        assert executor.post(base + "/parts", {"step": step, "part": part}).status_code == 200
        assert executor.post(base + "/commit", {"step": step, "parts": [part]}).status_code == 200
    _expire(app_client, lease["task_id"])
    other = FakeExecutor(app_client)
    other.register()
    second = other.claim().json()
    latest = app_client.get(
        f"/api/v1/jobs/{job_id}/tasks/{second['task_id']}/checkpoints/latest",
        headers=other.session,
    )
    assert latest.status_code == 200 and latest.json()["step"] == 2


def test_an_unknown_executor_heartbeat_asks_to_re_register(
    app_client: TestClient, executor: FakeExecutor
) -> None:
    path = f"/api/v1/jobs/executors/{executor.node.node_id}/heartbeat"
    assert executor.post(path).status_code == 200
    other = FakeExecutor(app_client)
    r = other.signed_post(f"/api/v1/jobs/executors/{other.node.node_id}/heartbeat", {})
    assert r.status_code == 401


def test_bad_input_is_a_4xx_never_a_500(submitter: Submitter, executor: FakeExecutor) -> None:
    assert submitter.submit(workload="../../x").status_code == 422
    assert submitter.submit(tasks=0).status_code == 422
    assert (
        executor.post("/api/v1/jobs/leases/nope/complete", {"metrics_sha256": "zz"}).status_code
        == 422
    )
    assert executor.post("/api/v1/jobs/leases/nope/fail", {"error": "x"}).status_code == 410
    assert submitter.client.get("/api/v1/jobs/nope", headers=submitter.auth).status_code == 404
