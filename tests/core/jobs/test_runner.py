"""The sandboxed runner: allowlist, argv refused, env whitelist, timeout, metrics required."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from core.errors import Cancelled, TaskExecutionError
from core.jobs.runner import SubprocessRunner


def _payload(**params: object) -> dict[str, object]:
    return {"task_id": "t1", "workload": "selftest", "params": params}


def test_an_unlisted_workload_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(TaskExecutionError, match="not on this executor's allowlist"):
        SubprocessRunner().run({"workload": "os.system"}, tmp_path, {})
    assert not (tmp_path / "spec.json").exists()


def test_an_argv_payload_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TaskExecutionError, match="argv payloads are refused"):
        SubprocessRunner().run({"workload": "selftest", "argv": ["sh", "-c", "id"]}, tmp_path, {})


def test_the_workload_sees_only_whitelisted_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MESHNET_TRACKER_ADMIN_TOKEN", "secret")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("MESHNET_JOIN_TOKEN", "secret")
    out = SubprocessRunner().run(_payload(print_env="1"), tmp_path, {})
    env = json.loads((out / "env.json").read_text())
    assert set(env) <= {"PATH", "HOME", "PYTHONPATH", "LANG", "LC_ALL", "TMPDIR", "PWD", "LC_CTYPE"}
    assert "secret" not in json.dumps(env)


def test_the_workload_runs_in_its_task_folder(tmp_path: Path) -> None:
    out = SubprocessRunner().run(_payload(print_env="1"), tmp_path, {})
    assert out == tmp_path / "out" and (tmp_path / "spec.json").is_file()


def test_a_failure_carries_the_last_lines_of_stderr(tmp_path: Path) -> None:
    with pytest.raises(TaskExecutionError, match="exited 3:\nselftest asked to fail: disk full"):
        SubprocessRunner().run(_payload(fail="disk full"), tmp_path, {})


def test_a_workload_over_its_wall_clock_is_killed(tmp_path: Path) -> None:
    payload = {**_payload(seconds="30"), "timeout_seconds": 1}
    with pytest.raises(TaskExecutionError, match="exceeded its 1s wall clock"):
        SubprocessRunner().run(payload, tmp_path, {})


def test_metrics_json_is_required(tmp_path: Path) -> None:
    runner = SubprocessRunner(workloads={"zen": "this"})  # exits 0, writes nothing
    with pytest.raises(TaskExecutionError, match=r"no out/metrics\.json"):
        runner.run({"workload": "zen"}, tmp_path, {})


def test_a_lost_lease_stops_the_workload(tmp_path: Path) -> None:
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    with pytest.raises(Cancelled):
        SubprocessRunner().run(_payload(seconds="30"), tmp_path, {}, cancel=cancel)
