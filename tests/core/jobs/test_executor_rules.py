"""Rules of the executor the other tests leave out: which file commits, which input is
unpacked, that a timed-out workload takes its grandchildren with it, and the
checkpoint uploader (each step once, retried after a failure, stopped by a lost lease).
"""

from __future__ import annotations

import hashlib
import os
import sys
import textwrap
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from core.errors import LeaseLost, TaskExecutionError
from core.jobs.client import Lease
from core.jobs.loop import ExecutorLoop, _CheckpointRelay
from core.jobs.runner import SubprocessRunner
from tests.core.jobs import hostile

ZEROS = "0" * 64


def _lease(**payload: Any) -> Lease:
    return Lease(
        lease_id="lease-1",
        job_id="job-1",
        task_id="task-1",
        attempt_number=1,
        deadline=time.time() + 600,
        lease_seconds=600.0,
        payload={"workload": "fake", "output_prefix": "jobs/job-1/task-1/", **payload},
    )


class RecordingClient:
    """The parts of JobsClient the loop and the uploader call, recorded."""

    def __init__(self, artifacts: Mapping[str, bytes] | None = None) -> None:
        self.artifacts = dict(artifacts or {})
        self.uploads: dict[str, bytes] = {}
        self.parts: list[tuple[int, dict[str, Any]]] = []
        self.commits: list[tuple[int, list[dict[str, Any]], str]] = []
        self.completed: list[str] = []
        self.failed: list[str] = []
        self.fail_uploads = 0  # the next N uploads raise
        self.lease_lost = False

    def attempt_heartbeat(self, lease_id: str) -> float:
        return time.time() + 600

    def download_artifact(self, key: str, dest: Path, lease_id: str) -> Path:
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(self.artifacts[key])
        return dest

    def upload_artifact(self, path: Path, key: str, lease_id: str) -> str:
        if self.lease_lost:
            raise LeaseLost("the lease ended")
        if self.fail_uploads:
            self.fail_uploads -= 1
            raise OSError("the tracker dropped the connection")
        data = path.read_bytes()
        self.uploads[key] = data
        return hashlib.sha256(data).hexdigest()

    def checkpoint_register_part(self, lease_id: str, step: int, part: Mapping[str, Any]) -> None:
        self.parts.append((step, dict(part)))

    def checkpoint_commit(
        self, lease_id: str, step: int, parts: Sequence[Mapping[str, Any]], manifest_uri: str
    ) -> None:
        self.commits.append((step, [dict(p) for p in parts], manifest_uri))

    def checkpoint_latest(self, job_id: str, task_id: str) -> dict[str, Any] | None:
        return None

    def complete(self, lease_id: str, metrics_sha256: str) -> bool:
        self.completed.append(metrics_sha256)
        return True

    def fail(self, lease_id: str, error: str) -> None:
        self.failed.append(error)


class WritingRunner(SubprocessRunner):
    """Writes the given files under out/ instead of running a workload; keeps the inputs."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        super().__init__(workloads={"fake": "unused"})
        self.files = files
        self.inputs: dict[str, Path] = {}
        self.seen: dict[str, Any] = {}

    def run(
        self,
        payload: Mapping[str, Any],
        workdir: Path,
        inputs: Mapping[str, Path],
        cancel: Any = None,
    ) -> Path:
        self.inputs = dict(inputs)
        self.seen = {
            name: (path.is_dir(), path.read_bytes() if path.is_file() else None)
            for name, path in inputs.items()
        }
        out = workdir / "out"
        for rel, data in self.files.items():
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / rel).write_bytes(data)
        return out


def _run_one(client: RecordingClient, runner: WritingRunner, lease: Lease, tmp: Path) -> bool:
    loop = ExecutorLoop(client, runner, workdir_base=tmp / "work")  # type: ignore[arg-type]
    return loop.execute_one(lease)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- which metrics.json commits ------------------------------------------------------------


def test_only_the_metrics_file_at_the_output_root_commits(tmp_path: Path) -> None:
    client = RecordingClient()
    runner = WritingRunner({"metrics.json": b'{"root": 1}', "sub/metrics.json": b'{"nested": 2}'})
    assert _run_one(client, runner, _lease(), tmp_path)
    assert client.completed == [_sha(b'{"root": 1}')]
    # Both were uploaded as outputs; only the root one is the commit key.
    assert set(client.uploads) == {
        "jobs/job-1/task-1/metrics.json",
        "jobs/job-1/task-1/sub/metrics.json",
    }


def test_a_nested_metrics_file_alone_commits_nothing(tmp_path: Path) -> None:
    client = RecordingClient()
    runner = WritingRunner({"deep/er/metrics.json": b'{"nested": 2}'})
    _run_one(client, runner, _lease(), tmp_path)
    assert client.completed == [ZEROS]
    assert _sha(b'{"nested": 2}') not in client.completed


# -- which inputs are unpacked -------------------------------------------------------------


def test_an_archive_not_named_in_unpack_inputs_stays_packed(tmp_path: Path) -> None:
    archive = hostile.tar_bytes(
        hostile.file_member("wrap/code.py"), data={"wrap/code.py": b"print(1)"}, gz=True
    )
    client = RecordingClient({"inputs/a/code.tar.gz": archive, "inputs/b/data.tar.gz": archive})
    runner = WritingRunner({"metrics.json": b"{}"})
    lease = _lease(
        inputs={
            "code": "artifact://inputs/a/code.tar.gz",
            "data": "artifact://inputs/b/data.tar.gz",
        },
        unpack_inputs=["code"],
    )
    assert _run_one(client, runner, lease, tmp_path)
    assert runner.seen["code"] == (True, None)  # named: unpacked to a folder
    assert runner.seen["data"] == (False, archive)  # not named: the archive's own bytes
    assert runner.inputs["data"].name == "data"


# -- a timed-out workload and its grandchildren --------------------------------------------

SPAWNER = textwrap.dedent(
    """
    import argparse, json, subprocess, sys, time
    from pathlib import Path

    parser = argparse.ArgumentParser()
    parser.add_argument("--spec")
    parser.add_argument("--out")
    args = parser.parse_args()
    params = json.loads(Path(args.spec).read_text())["params"]
    child = subprocess.Popen(
        [sys.executable, "-c",
         "import subprocess, sys, time;"
         "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']);"
         "open(sys.argv[1], 'w').write(str(g.pid)); time.sleep(120)",
         params["grandchild_pid_file"]]
    )
    Path(params["child_pid_file"]).write_text(str(child.pid))
    time.sleep(120)
    """
)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    stat = Path(f"/proc/{pid}/stat")  # a zombie waiting for init to reap it is gone too
    return stat.exists() and stat.read_text().split(") ", 1)[1].startswith("Z")


def _wait_for_file(path: Path, limit_s: float = 60.0) -> int:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if path.is_file() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX")
def test_a_timed_out_workloads_children_and_grandchildren_die(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "spawner_workload.py").write_text(SPAWNER)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join([str(tmp_path / "lib"), os.environ.get("PYTHONPATH", "")])
    )
    child_file, grandchild_file = tmp_path / "child.pid", tmp_path / "grandchild.pid"
    payload = {
        "workload": "spawner",
        "params": {
            "child_pid_file": str(child_file),
            "grandchild_pid_file": str(grandchild_file),
        },
    }
    # The wall clock is long enough for both descendants to start on a loaded machine;
    # the pid files are read afterwards, so the test never races the spawn.
    runner = SubprocessRunner(workloads={"spawner": "spawner_workload"}, timeout_seconds=20)
    workdir = tmp_path / "task"
    workdir.mkdir()
    with pytest.raises(TaskExecutionError, match="exceeded its 20s wall clock"):
        runner.run(payload, workdir, {})
    pids = [_wait_for_file(child_file, 1.0), _wait_for_file(grandchild_file, 1.0)]
    deadline = time.monotonic() + 30
    while not all(_gone(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    survivors = [pid for pid in pids if not _gone(pid)]
    for pid in survivors:
        os.kill(pid, 9)
    assert not survivors, "a descendant of the timed-out workload survived it"


# -- the checkpoint uploader ---------------------------------------------------------------


def _relay(client: RecordingClient, ckpt: Path) -> _CheckpointRelay:
    return _CheckpointRelay(client, _lease(), ckpt, "jobs/job-1/task-1/")  # type: ignore[arg-type]


def test_the_uploader_ships_each_step_once_as_a_one_part_manifest(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "step-1.json").write_text('{"step": 1}')
    (ckpt / "step-2.json").write_text('{"step": 2}')
    (ckpt / "step-x.json").write_text("not a step")  # no step number: skipped
    (ckpt / "notes.txt").write_text("not a checkpoint")
    (ckpt / "step-3.json").symlink_to(tmp_path / "elsewhere.json")  # never followed
    client = RecordingClient()
    relay = _relay(client, ckpt)
    relay.ship_new()
    relay.ship_new()  # a second scan ships nothing again
    assert sorted(client.uploads) == [
        "jobs/job-1/task-1/ckpt/step-1.json",
        "jobs/job-1/task-1/ckpt/step-2.json",
    ]
    assert [step for step, _ in client.parts] == [1, 2]
    step, parts, uri = client.commits[1]
    assert step == 2 and uri == "artifact://jobs/job-1/task-1/ckpt/2/"
    assert parts == [
        {
            "key": "jobs/job-1/task-1/ckpt/step-2.json",
            "sha256": _sha(b'{"step": 2}'),
            "size_bytes": len(b'{"step": 2}'),
        }
    ]


def test_a_failed_ship_is_retried_at_the_next_scan(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "step-5.json").write_text('{"step": 5}')
    client = RecordingClient()
    client.fail_uploads = 1
    relay = _relay(client, ckpt)
    relay.ship_new()
    assert client.commits == [] and relay.shipped == set()
    relay.ship_new()
    assert [c[0] for c in client.commits] == [5] and relay.shipped == {"step-5.json"}


def test_a_lost_lease_stops_the_uploader(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    for step in (1, 2):
        (ckpt / f"step-{step}.json").write_text("{}")
    client = RecordingClient()
    client.lease_lost = True
    relay = _relay(client, ckpt)
    relay.start()
    relay.join(30)
    assert not relay.is_alive()  # it halted by itself on the lost lease
    assert client.commits == []


def test_the_last_checkpoint_of_a_dying_attempt_is_shipped_by_the_final_sweep(
    tmp_path: Path,
) -> None:
    ckpt = tmp_path / "ckpt"
    client = RecordingClient()
    relay = _relay(client, ckpt)
    relay.start()
    ckpt.mkdir()
    (ckpt / "step-9.json").write_text('{"step": 9}')
    relay.finish()  # the workload died right after writing it
    assert [c[0] for c in client.commits] == [9]
