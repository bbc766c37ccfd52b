"""Where the executor follows the seed (flashnode's executor) to the letter: the lease
heartbeat's cadence, the runner's default timeout and error tail, JSON log lines with
``text``, a keyring error on logout as a sentence, and the input checks before any
download."""

from __future__ import annotations

import json
import logging
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest
from keyring.errors import KeyringLocked

from app.cli.node import main
from app.cli.node_jobs import JsonLines
from core.errors import TaskExecutionError
from core.jobs.client import Lease
from core.jobs.loop import ExecutorLoop, _LeaseHeartbeat, heartbeat_interval, jlog
from core.jobs.runner import SubprocessRunner
from tests.core.keyring_backend import DictKeyring


def _lease(payload: dict[str, Any], deadline: float = 0.0) -> Lease:
    return Lease("lease", "job", "task-0123456789", 1, deadline, 30.0, payload)


@pytest.mark.parametrize(("left", "interval"), [(30.0, 10.0), (6.0, 2.0), (3.0, 2.0), (-5, 2.0)])
def test_the_lease_heartbeat_runs_every_max_2_or_a_third_of_the_time_left(
    left: float, interval: float
) -> None:
    assert heartbeat_interval(1000.0 + left, 1000.0) == pytest.approx(interval)


def test_a_lease_heartbeat_thread_takes_its_interval_from_the_deadline() -> None:
    import time

    beat = _LeaseHeartbeat(object(), _lease({}, deadline=time.time() + 90.0))  # type: ignore[arg-type]
    assert 29.0 <= beat.interval <= 30.0


def test_the_runner_defaults_to_600_s_also_from_the_command_line() -> None:
    assert SubprocessRunner().timeout_seconds == 600.0
    parser_defaults = _run_parser_defaults()
    assert parser_defaults["task_timeout"] == 600.0


def _run_parser_defaults() -> dict[str, Any]:
    import argparse

    from app.cli import node_jobs

    parser = argparse.ArgumentParser()
    node_jobs.register(parser.add_subparsers())
    return vars(parser.parse_args(["jobs", "run", "--tracker", "http://t:1"]))


def test_a_non_zero_exit_reports_the_last_800_characters_of_stderr(tmp_path: Path) -> None:
    noisy = tmp_path / "noisy-python"
    noisy.write_text("#!/bin/sh\nprintf 'A%.0s' $(seq 1 1500) >&2\nprintf 'THE END' >&2\nexit 3\n")
    noisy.chmod(noisy.stat().st_mode | stat.S_IXUSR)
    runner = SubprocessRunner(python=str(noisy))
    with pytest.raises(TaskExecutionError) as failed:
        runner.run({"workload": "selftest"}, tmp_path / "task", {})
    message = str(failed.value)
    tail = message.split("exited 3:\n", 1)[1]
    assert len(tail) == 800 and tail.endswith("THE END") and tail.startswith("A")


def test_json_log_lines_carry_text(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="meshnet.jobs"):
        jlog(logging.INFO, "claimed", task="t1")
    line = json.loads(caplog.records[-1].getMessage())
    assert line == {"text": "claimed", "task": "t1"}
    record = logging.LogRecord("meshnet.jobs", logging.INFO, "", 0, "plain words", None, None)
    assert json.loads(JsonLines().format(record))["text"] == "plain words"


class LockedKeyring(DictKeyring):
    def delete_password(self, service: str, username: str) -> None:
        raise KeyringLocked("the keyring is locked")


@pytest.fixture
def locked_keyring() -> Iterator[None]:
    previous = keyring.get_keyring()
    keyring.set_keyring(LockedKeyring())
    try:
        yield
    finally:
        keyring.set_keyring(previous)


def test_logout_reports_a_keyring_error_as_a_sentence(
    locked_keyring: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MESHNET_JOBS_CREDENTIALS", raising=False)
    assert main(["jobs", "logout", "--tracker", "http://t:1/"]) == 1
    err = capsys.readouterr().err
    assert "could not forget the credential for http://t:1" in err
    assert "[keyring-error]" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("payload", "error"),
    [
        ({"inputs": {"a": "artifact://k"}, "unpack_inputs": "a"}, "must be a list"),
        ({"inputs": {"a": "artifact://k"}, "unpack_inputs": [1]}, "must be a list"),
        ({"inputs": ["artifact://k"]}, "must map input names"),
        ({"inputs": {"a": "artifact://k"}, "unpack_inputs": ["b"]}, "do not exist"),
        ({"inputs": {"../x": "artifact://k"}}, "not a plain name"),
        ({"inputs": {"resume.json": "artifact://k"}, "checkpoint": {}}, "resume file"),
    ],
)
def test_unpack_inputs_types_are_checked_before_any_download(
    tmp_path: Path, payload: dict[str, Any], error: str
) -> None:
    loop = ExecutorLoop(object())  # type: ignore[arg-type]  # no download may happen
    with pytest.raises(TaskExecutionError, match=error):
        loop._stage_inputs(_lease(payload), tmp_path)


@pytest.mark.parametrize("unpack", [True, False])
def test_an_input_whose_path_is_taken_collides(tmp_path: Path, unpack: bool) -> None:
    (tmp_path / "inputs" / "data").mkdir(parents=True)
    payload = {"inputs": {"data": "artifact://k"}, "unpack_inputs": ["data"] if unpack else []}
    loop = ExecutorLoop(object())  # type: ignore[arg-type]
    with pytest.raises(TaskExecutionError, match="collides with an existing path"):
        loop._stage_inputs(_lease(payload), tmp_path)
