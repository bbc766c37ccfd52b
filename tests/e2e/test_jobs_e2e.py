"""The batch-job proof: a real tracker and real executor processes on loopback.

Jobs are submitted and read with `meshnet-tracker jobs`, run by
`meshnet-node jobs run` processes; an executor is killed with SIGKILL mid-task,
another is frozen past its lease, hostile inputs are fed to a live executor.
"""

from __future__ import annotations

import hashlib
import io
import json
import signal
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.core.jobs.test_loop import HOSTILE
from tests.e2e.jobs_processes import ExecutorProcess, JobsCli, tracker_cli
from tests.tracker_service.jobs_helpers import UNCHECKED_JOBS_ENV, FakeExecutor, Submitter
from tests.tracker_service.server_process import TrackerProcess

pytestmark = pytest.mark.slow


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[JobsCli]:
    home = tmp_path / "tracker"
    home.mkdir()
    db_url = f"sqlite:///{home / 'tracker.db'}"
    added = tracker_cli("submitters", "add", "--db", db_url, "--label", "e2e")
    assert added.returncode == 0, added.stderr
    token = added.stdout.strip().splitlines()[-1]
    tracker = TrackerProcess(home, db_url, MESHNET_TRACKER_BACKGROUND_TASKS="false")
    tracker.env.update(UNCHECKED_JOBS_ENV)
    tracker.start()
    try:
        yield JobsCli(tracker, token)
    finally:
        tracker.stop()


def _steps(shown: dict[str, Any]) -> int:
    keys = [o["key"] for t in shown["tasks"] for o in t["outputs"]]
    return max((int(k.rsplit("step-", 1)[1][:-5]) for k in keys if "/ckpt/step-" in k), default=0)


def _tgz(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_a_job_of_several_tasks_completes_and_its_results_download(
    cli: JobsCli, tmp_path: Path
) -> None:
    data = tmp_path / "data.tar.gz"
    data.write_bytes(_tgz({"wrap/one.txt": b"one", "wrap/sub/two.txt": b"two"}))
    job_id = cli.submit(
        "selftest", "--tasks", "6", "--param", "seconds=1", "--param", "step_seconds=0.1",
        "--input", f"data={data}", "--unpack", "data",
    )  # fmt: skip
    executors = [
        ExecutorProcess(tmp_path, f"ex{i}", cli.tracker.url, "--idle-exit", "2") for i in range(2)
    ]
    try:
        assert [e.wait() for e in executors] == [0, 0]
    finally:
        for e in executors:
            e.stop()
    shown = cli.show(job_id)
    assert shown["state"] == "succeeded"
    assert len({t["node_id"] for t in shown["tasks"]}) >= 1
    out = tmp_path / "results"
    done = cli.run("jobs", "results", job_id, "--out", str(out))
    assert done.returncode == 0, done.stderr
    listings = sorted(out.glob("*/inputs.json"))
    assert len(listings) == 6
    described = json.loads(listings[0].read_text())["data"]
    assert {d["path"] for d in described} == {"one.txt", "sub/two.txt"}
    text = cli.run("jobs", "show", job_id)
    assert "succeeded" in text.stdout and "ATTEMPTS" in text.stdout
    listing = cli.run("jobs", "list")
    assert job_id in listing.stdout
    state = httpx.get(cli.tracker.url + "/api/v1/state").json()
    assert any(j["job_id"] == job_id and j["state"] == "succeeded" for j in state["jobs"])
    assert "Batch jobs" in httpx.get(cli.tracker.url + "/").text


def test_a_killed_executor_task_resumes_elsewhere_from_the_last_checkpoint(
    cli: JobsCli, tmp_path: Path
) -> None:
    job_id = cli.submit(
        "selftest", "--checkpoint", "--lease-seconds", "3", "--max-attempts", "3",
        "--param", "seconds=40", "--param", "step_seconds=0.5", "--param", "checkpoint=1",
    )  # fmt: skip
    first = ExecutorProcess(tmp_path, "first", cli.tracker.url)
    try:
        cli.wait(job_id, lambda s: _steps(s) >= 4, timeout_s=60)
        first.signal(signal.SIGKILL)
        first.wait()
    finally:
        first.stop()
    shipped = _steps(cli.show(job_id))
    second = ExecutorProcess(tmp_path, "second", cli.tracker.url, "--max-tasks", "1")
    try:
        assert second.wait(timeout_s=120) == 0
    finally:
        second.stop()
    shown = cli.show(job_id)
    task = shown["tasks"][0]
    assert shown["state"] == "succeeded" and task["attempts"] == 2
    out = tmp_path / "results"
    assert cli.run("jobs", "results", job_id, "--out", str(out)).returncode == 0
    metrics = json.loads(next(out.glob("*/metrics.json")).read_text())
    # Not from step 0: from the last committed checkpoint. The kill can land between a
    # checkpoint's upload and its manifest's commit, so the newest uploaded step may
    # not count; never more than that one is lost.
    assert shipped >= 4
    assert shipped - 1 <= metrics["resumed_from"] <= shipped
    assert metrics["steps_run"] == 40 - metrics["resumed_from"]
    assert any(e.get("text") == "resuming from checkpoint" for e in second.events())


def test_a_frozen_executor_loses_its_lease_and_its_result_is_never_committed(
    cli: JobsCli, tmp_path: Path
) -> None:
    # A lease is renewed every max(2, time left / 3) s: a 6 s lease holds with slack.
    job_id = cli.submit(
        "selftest", "--lease-seconds", "6", "--param", "seconds=8", "--param", "step_seconds=1",
    )  # fmt: skip
    frozen = ExecutorProcess(tmp_path, "frozen", cli.tracker.url, "--once")
    try:
        cli.wait(job_id, lambda s: s["tasks"][0]["state"] == "leased", timeout_s=60)
        frozen.signal(signal.SIGSTOP)  # its workload keeps running; its heartbeats stop
        time.sleep(3)
        rescuer = ExecutorProcess(tmp_path, "rescuer", cli.tracker.url, "--max-tasks", "1")
        assert rescuer.wait(timeout_s=120) == 0
        frozen.signal(signal.SIGCONT)
        assert frozen.wait(timeout_s=60) == 0
    finally:
        frozen.signal(signal.SIGCONT)
        frozen.stop()
    shown = cli.show(job_id)
    task = shown["tasks"][0]
    assert shown["state"] == "succeeded" and task["attempts"] == 2
    assert task["node_id"] != next(
        e["node"] for e in frozen.events() if e.get("text") == "executor started"
    )
    finished = [e for e in frozen.events() if e.get("text") == "task finished"]
    assert not any(e.get("accepted") for e in finished)  # never committed
    assert any("discarded" in str(e.get("text")) for e in frozen.events())


def test_a_duplicate_completion_is_refused_by_the_live_tracker(cli: JobsCli) -> None:
    with httpx.Client(base_url=cli.tracker.url, timeout=10) as client:
        submitter = Submitter(client, cli.token)
        job_id = submitter.submit(tasks=1).json()["job_id"]
        executor = FakeExecutor(client)
        assert executor.register().status_code == 200
        lease = executor.claim().json()
        assert executor.finish(lease).status_code == 200
        again = executor.post(
            f"/api/v1/jobs/leases/{lease['lease_id']}/complete",
            {"metrics_sha256": hashlib.sha256(b'{"ok": true}').hexdigest()},
        )
        assert again.status_code == 409
        assert submitter.show(job_id)["tasks"][0]["attempts"] == 1


def test_hostile_inputs_fail_their_tasks_and_the_executor_process_goes_on(
    cli: JobsCli, tmp_path: Path
) -> None:
    with httpx.Client(base_url=cli.tracker.url, timeout=30) as client:
        submitter = Submitter(client, cli.token)
        jobs = {}
        for name, (data, reason) in HOSTILE.items():
            key = submitter.upload_input(f"{name}.bin", data)
            body = {"inputs": {"src": key}, "unpack_inputs": ["src"], "max_attempts": 1}
            jobs[name] = (submitter.submit(**body).json()["job_id"], reason)
        plain = submitter.upload_input("plain.txt", b"x")
        jobs["unsafe-name"] = (
            submitter.submit(inputs={"../x": plain}, max_attempts=1).json()["job_id"],
            "not a plain name",
        )
        jobs["unpack-no-input"] = (
            submitter.submit(inputs={"a": plain}, unpack_inputs=["b"], max_attempts=1).json()[
                "job_id"
            ],
            "do not exist",
        )
        good = submitter.submit(tasks=1).json()["job_id"]
    executor = ExecutorProcess(tmp_path, "ex", cli.tracker.url, "--idle-exit", "2")
    try:
        assert executor.wait(timeout_s=180) == 0
    finally:
        executor.stop()
    assert cli.show(good)["state"] == "succeeded"
    for name, (job_id, reason) in jobs.items():
        task = cli.show(job_id)["tasks"][0]
        assert task["state"] == "failed" and reason in task["error"], (name, task["error"])
    work = executor.root / "work"
    assert not work.exists() or not list(work.iterdir())
    assert not (tmp_path / "evil.txt").exists() and not (executor.root / "evil.txt").exists()


def test_a_workload_that_prints_its_environment_sees_only_whitelisted_variables(
    cli: JobsCli, tmp_path: Path
) -> None:
    job_id = cli.submit("selftest", "--param", "print_env=1")
    executor = ExecutorProcess(
        tmp_path,
        "ex",
        cli.tracker.url,
        "--once",
        MESHNET_TRACKER_ADMIN_TOKEN="admin-secret",
        MESHNET_SUBMITTER_TOKEN=cli.token,
        AWS_SECRET_ACCESS_KEY="cloud-secret",
    )
    try:
        assert executor.wait() == 0
    finally:
        executor.stop()
    out = tmp_path / "results"
    assert cli.run("jobs", "results", job_id, "--out", str(out)).returncode == 0
    env = json.loads(next(out.glob("*/env.json")).read_text())
    assert set(env) <= {"PATH", "HOME", "PYTHONPATH", "LANG", "LC_ALL", "TMPDIR", "PWD", "LC_CTYPE"}
    assert not {"admin-secret", "cloud-secret", cli.token} & set(env.values())
