"""`meshnet-node jobs login | logout | run`: the saved credential per tracker URL (keyring by
default, the 0600 file of ``--credentials-file``), reused across restarts until it expires."""

from __future__ import annotations

import json
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.cli.node import main
from core.jobs.credentials import CredentialStore
from tests.core.jobs.tracker_fixture import LiveTracker
from tests.core.keyring_backend import DictKeyring
from tracker_service.store.db import Database
from tracker_service.store.job_tables import JobExecutor

REPO = Path(__file__).resolve().parents[3]


def test_logout_forgets_the_credential_for_that_tracker_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "creds.json"
    store = CredentialStore(path)
    store.save("http://a:1", "mne_a")
    store.save("http://b:2", "mne_b")
    assert (
        main(["jobs", "logout", "--tracker", "http://a:1/", "--credentials-file", str(path)]) == 0
    )
    assert "forgot" in capsys.readouterr().out
    assert store.load("http://a:1") is None and store.load("http://b:2") == "mne_b"


def test_run_once_registers_saves_its_credential_and_exits_when_idle(
    live_tracker: LiveTracker, tmp_path: Path
) -> None:
    creds = tmp_path / "creds.json"
    code = main(
        [
            "jobs",
            "run",
            "--tracker",
            live_tracker.url,
            "--once",
            "--identity-file",
            str(tmp_path / "node.key"),
            "--credentials-file",
            str(creds),
            "--workdir",
            str(tmp_path / "work"),
        ]
    )
    assert code == 0
    token = CredentialStore(creds).load(live_tracker.url)
    assert token is not None and token.startswith("mne_")
    assert stat.S_IMODE(creds.stat().st_mode) == 0o600


def _run_once(tracker: LiveTracker, tmp_path: Path, creds: Path) -> int:
    return main(
        [
            "jobs", "run", "--tracker", tracker.url, "--once",
            "--identity-file", str(tmp_path / "node.key"),
            "--credentials-file", str(creds),
            "--workdir", str(tmp_path / "work"),
        ]
    )  # fmt: skip


def _session_hash(tracker: LiveTracker) -> str:
    database = Database(tracker.db_url)
    try:
        with database.sessions() as session:
            (row,) = session.query(JobExecutor).all()
            return row.session_hash
    finally:
        database.dispose()


def test_a_restarted_executor_reuses_its_credential_and_registers_again_once_it_expired(
    live_tracker: LiveTracker, tmp_path: Path
) -> None:
    creds = tmp_path / "creds.json"
    assert _run_once(live_tracker, tmp_path, creds) == 0
    first_token, first_hash = (
        CredentialStore(creds).load(live_tracker.url),
        _session_hash(live_tracker),
    )
    assert _run_once(live_tracker, tmp_path, creds) == 0  # a restart: no new registration
    assert CredentialStore(creds).load(live_tracker.url) == first_token
    assert _session_hash(live_tracker) == first_hash
    database = Database(live_tracker.db_url)
    with database.sessions.begin() as session:  # the credential's hour is over
        session.query(JobExecutor).update({JobExecutor.session_expires_at: time.time() - 1})
    database.dispose()
    assert _run_once(live_tracker, tmp_path, creds) == 0
    renewed = CredentialStore(creds).load(live_tracker.url)
    assert renewed is not None and renewed.startswith("mne_") and renewed != first_token
    assert _session_hash(live_tracker) != first_hash  # it registered again


def test_login_saves_a_manual_token_per_normalised_url_in_the_named_0600_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "creds.json"
    argv = ["jobs", "login", "--credentials-file", str(path)]
    assert main([*argv, "--tracker", "http://a:1/", "--token", " mne_a \n"]) == 0
    assert main([*argv, "--tracker", "http://b:2", "--token", "mne_b"]) == 0
    assert "saved the session credential for http://a:1" in capsys.readouterr().out
    assert json.loads(path.read_text()) == {"http://a:1": "mne_a", "http://b:2": "mne_b"}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert CredentialStore(path).load("http://a:1/") == "mne_a"  # what `jobs run` reads


def test_login_saves_in_the_keyring_by_default(
    dict_keyring: DictKeyring, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["jobs", "login", "--tracker", "http://a:1/", "--token", "mne_k"]) == 0
    assert dict_keyring.entries[("meshnet-jobs", "http://a:1")] == "mne_k"
    assert "OS keyring" in capsys.readouterr().out


def test_login_without_a_token_or_a_terminal_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_terminal(_prompt: str) -> str:
        raise EOFError

    monkeypatch.setattr("getpass.getpass", no_terminal)
    path = tmp_path / "creds.json"
    assert main(["jobs", "login", "--tracker", "http://a:1", "--credentials-file", str(path)]) == 2
    assert "pass --token" in capsys.readouterr().err
    assert main(["jobs", "login", "--tracker", "http://a:1", "--token", " ",
                 "--credentials-file", str(path)]) == 2  # fmt: skip
    assert not path.exists()


def _jobs_run(tmp_path: Path, *extra: str) -> subprocess.Popen[str]:
    argv = [
        sys.executable, "-m", "app.cli.node", "jobs", "run", "--tracker", "http://127.0.0.1:9",
        "--credentials-file", str(tmp_path / "creds.json"),
        "--identity-file", str(tmp_path / "node.key"), *extra,
    ]  # fmt: skip
    return subprocess.Popen(
        argv, cwd=REPO, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )


@pytest.mark.slow
def test_jobs_run_with_stdin_control_stops_when_stdin_ends_and_says_why(tmp_path: Path) -> None:
    process = _jobs_run(tmp_path, "--control", "stdin")
    try:
        _out, err = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 0
    assert "stdin ended" in err and "--control stdin" in err


@pytest.mark.slow
def test_jobs_run_without_stdin_control_ignores_stdin_until_signalled(tmp_path: Path) -> None:
    process = _jobs_run(tmp_path)  # stdin on /dev/null: at its end at once
    try:
        assert process.stderr is not None
        for line in process.stderr:  # the tracker is unreachable: it keeps retrying
            if "registration failed" in line:
                break
        assert process.poll() is None  # still running: the end of stdin was no stop
        process.send_signal(signal.SIGTERM)
        assert process.wait(60) == 0
    finally:
        process.kill()
