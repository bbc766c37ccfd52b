"""The executor loop against a real tracker process on loopback."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from core.identity.keypair import NodeIdentity
from core.jobs.client import JobsClient
from core.jobs.credentials import CredentialStore
from core.jobs.loop import ExecutorLoop
from tests.core.jobs import hostile
from tests.core.jobs.tracker_fixture import LiveTracker
from tracker_service.store.db import Database
from tracker_service.store.job_tables import JobExecutor


def _loop(tracker: LiveTracker, tmp_path: Path, **kw: object) -> ExecutorLoop:
    client = JobsClient(
        tracker.url, NodeIdentity.generate(), credentials=CredentialStore(tmp_path / "creds.json")
    )
    client.register()
    return ExecutorLoop(client, workdir_base=tmp_path / "work", poll_seconds=0.1, **kw)  # type: ignore[arg-type]


def _download(tracker: LiveTracker, key: str) -> bytes:
    r = tracker.submitter.client.get(
        f"/api/v1/jobs/artifacts/{key}", headers=tracker.submitter.auth
    )
    assert r.status_code == 200, r.text
    return r.content


def test_a_job_of_several_tasks_runs_uploads_and_commits(
    live_tracker: LiveTracker, tmp_path: Path
) -> None:
    sub = live_tracker.submitter
    code = sub.upload_input(
        "code.tar.gz",
        hostile.tar_bytes(
            hostile.file_member("wrap/a.txt"), data={"wrap/a.txt": b"hello"}, gz=True
        ),
    )
    notes = sub.upload_input("notes.txt", b"plain input")
    job_id = sub.submit(
        tasks=3, inputs={"code": code, "notes": notes}, unpack_inputs=["code"]
    ).json()["job_id"]
    loop = _loop(live_tracker, tmp_path)
    assert loop.run(idle_exit_s=0) == 3
    shown = live_tracker.wait_for_job(job_id)
    assert shown["state"] == "succeeded"
    task = shown["tasks"][0]  # type: ignore[index]
    listing = next(o for o in task["outputs"] if o["key"].endswith("inputs.json"))
    described = json.loads(_download(live_tracker, listing["key"]))
    assert described["code"] == [{"path": "a.txt", "size": 5, "sha256": hostile_sha(b"hello")}]
    assert described["notes"][0]["size"] == len(b"plain input")
    assert not list((tmp_path / "work").iterdir())  # task folders removed


def hostile_sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


HOSTILE = {
    "zip-slip": (hostile.zip_bytes({"../../evil.txt": b"x"}), "climbs out"),
    "absolute": (
        hostile.tar_bytes(hostile.file_member("/tmp/evil.txt"), data={"/tmp/evil.txt": b"x"}),
        "absolute",
    ),
    "symlink-out": (hostile.tar_bytes(hostile.link_member("l", "../../../etc")), "leads out"),
    "hardlink-out": (
        hostile.tar_bytes(hostile.link_member("h", "/etc/passwd", hard=True)),
        "absolute",
    ),
    "device": (hostile.tar_bytes(hostile.device_member("null")), "device"),
    "zip-bomb": (hostile.zip_bomb(64), "expands more than"),
    "too-many-members": (hostile.many_members(10_050), "more than 10000"),
}


def test_hostile_inputs_fail_their_tasks_and_the_executor_goes_on(
    live_tracker: LiveTracker, tmp_path: Path
) -> None:
    sub = live_tracker.submitter
    jobs: dict[str, tuple[str, str]] = {}
    for name, (data, reason) in HOSTILE.items():
        key = sub.upload_input(f"{name}.bin", data)
        body = {"inputs": {"src": key}, "unpack_inputs": ["src"], "max_attempts": 1}
        jobs[name] = (sub.submit(**body).json()["job_id"], reason)
    plain = sub.upload_input("plain.txt", b"x")
    jobs["unsafe-name"] = (
        sub.submit(inputs={"../../.ssh": plain}, max_attempts=1).json()["job_id"],
        "not a plain name",
    )
    jobs["unpack-no-input"] = (
        sub.submit(inputs={"a": plain}, unpack_inputs=["b"], max_attempts=1).json()["job_id"],
        "do not exist",
    )
    good = sub.submit(tasks=1).json()["job_id"]
    loop = _loop(live_tracker, tmp_path)
    assert loop.run(idle_exit_s=0) == 1
    assert live_tracker.wait_for_job(good)["state"] == "succeeded"
    for name, (job_id, reason) in jobs.items():
        shown = live_tracker.wait_for_job(job_id)
        assert shown["state"] == "failed", name
        assert reason in shown["tasks"][0]["error"], (name, shown["tasks"][0]["error"])  # type: ignore[index]
    # Nothing was written outside the task folders (which are all removed again).
    assert not list((tmp_path / "work").iterdir())
    assert not (tmp_path / "evil.txt").exists() and not Path("/tmp/evil.txt").exists()


def test_a_refused_executor_heartbeat_makes_it_register_again(
    live_tracker: LiveTracker, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    loop = _loop(live_tracker, tmp_path)
    database = Database(live_tracker.db_url)
    with database.sessions.begin() as session:  # the tracker forgets the executor
        session.query(JobExecutor).delete()
    database.dispose()
    caplog.set_level(logging.INFO, logger="meshnet.jobs")
    loop.run(once=True)
    assert any("registering again" in r.getMessage() for r in caplog.records)
    job_id = live_tracker.submitter.submit(tasks=1).json()["job_id"]
    assert loop.run(once=True) == 1
    assert live_tracker.wait_for_job(job_id)["state"] == "succeeded"


def test_a_tracker_outage_backs_off_from_1s_doubling_to_30s(tmp_path: Path) -> None:
    client = JobsClient("http://127.0.0.1:9", NodeIdentity.generate())
    waits: list[float] = []
    loop = ExecutorLoop(client, workdir_base=tmp_path / "work")

    def sleep(seconds: float) -> bool:
        waits.append(seconds)
        return len(waits) >= 8

    loop._sleep = sleep
    loop.run()
    assert waits == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]


class _FlakyTracker:
    """claim() fails, fails, succeeds (no work), fails: the backoff must start over."""

    node_id = "n"

    def __init__(self) -> None:
        self.answers = [False, False, True, False]

    def node_heartbeat(self) -> bool:
        return True

    def claim(self) -> None:
        if self.answers.pop(0) if self.answers else True:
            return None
        raise ConnectionError("tracker down")


def test_the_outage_backoff_resets_after_a_success(tmp_path: Path) -> None:
    waits: list[float] = []
    loop = ExecutorLoop(_FlakyTracker(), workdir_base=tmp_path, poll_seconds=0.01)  # type: ignore[arg-type]

    def sleep(seconds: float) -> bool:
        waits.append(seconds)
        return len(waits) >= 4

    loop._sleep = sleep
    loop.run()
    assert waits == [1.0, 2.0, 0.01, 1.0]
