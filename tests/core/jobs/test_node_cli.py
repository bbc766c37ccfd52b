"""`meshnet-node jobs logout` clears the saved credential; `jobs run --once` exits on no work."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli.node import main
from core.jobs.credentials import CredentialStore
from tests.core.jobs.tracker_fixture import LiveTracker


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
