"""What the join tests share: a tracker that describes its network, invites made with
its own CLI, and a fresh app with no network joined (tests/app/ui/screens/test_join_page.py,
tests/app/ui/test_join_entry.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest
from PySide6.QtCore import QSettings

from app.ui.main import MeshNetApp
from app.ui.screens.doctor.wizard import DoctorWizard
from app.ui.settings_store import SettingsStore
from tests.core.keyring_backend import DictKeyring
from tests.tracker_service.server_process import TrackerProcess

OPERATOR = "Riverside Makerspace"
NAME = "Riverside Makers"
# Words the main path must not use (issue 22).
ENGINEERING_WORDS = (
    "shard", "layer", "recipe", "fingerprint", "digest", "admission", "gate", "dark",
    "certified", "capability", "registration", "reachability", "data plane", "identity key",
    "token", "ws://", "wss://", "port",
)  # fmt: skip


def use_dict_keyring() -> Iterator[DictKeyring]:
    previous = keyring.get_keyring()
    backend = DictKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


def use_file_keyring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """One keyring for the test and its node children (a file), so the child serves
    with the identity the app joined with (the tracker binds the join token to it)."""
    from tests.app.file_keyring import FileKeyring
    from tests.tracker_service.server_process import REPO

    monkeypatch.setenv("MESHNET_TEST_KEYRING_FILE", str(tmp_path / "keyring.json"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "tests.app.file_keyring.FileKeyring")
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    previous = keyring.get_keyring()
    keyring.set_keyring(FileKeyring())
    yield
    keyring.set_keyring(previous)


class QuietProbes:
    """Pause-rule probes that read nothing: the walks are about joining and serving."""

    def read(self, node_pid: int | None) -> Any:
        from app.pause_rules import ProbeReadings

        return ProbeReadings()


def start_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, start_timeout_s: float = 30.0, **env: str
) -> Iterator[TrackerProcess]:
    """A tracker that describes its network; invites are made with its own CLI. ``env``
    adds or replaces its settings (the join pages' tracker dials nodes only hourly)."""
    data = tmp_path / "tracker-data"
    monkeypatch.setenv("MESHNET_TRACKER_DATA_DIR", str(data))  # the invite CLI's key too
    settings = {
        "MESHNET_TRACKER_DATA_DIR": str(data),
        "MESHNET_TRACKER_NETWORK_NAME": NAME,
        "MESHNET_TRACKER_NETWORK_OPERATOR": OPERATOR,
        "MESHNET_TRACKER_NETWORK_DESCRIPTION": "Gaming PCs answer questions in the evenings.",
        "MESHNET_TRACKER_REACHABILITY_POLL_S": "3600",
    }
    settings.update(env)
    tracker = TrackerProcess(tmp_path, f"sqlite:///{tmp_path / 'tracker.db'}", **settings)
    try:
        yield tracker.start(timeout_s=start_timeout_s)
    finally:
        tracker.stop()


@pytest.fixture(autouse=True)
def dict_keyring() -> Iterator[DictKeyring]:
    """A dict-backed keyring: a test module that imports this fixture runs every test on it."""
    yield from use_dict_keyring()


@pytest.fixture
def network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TrackerProcess]:
    yield from start_network(tmp_path, monkeypatch)


def start_serving_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[TrackerProcess]:
    """start_network's tracker dialling and hearing heartbeats as a real one, for walks
    that end serving; given longer to start on a busy machine."""
    yield from start_network(
        tmp_path,
        monkeypatch,
        start_timeout_s=180,
        MESHNET_TRACKER_NETWORK_DESCRIPTION="",
        MESHNET_TRACKER_REACHABILITY_POLL_S="0.5",
        MESHNET_TRACKER_HEARTBEAT_INTERVAL_S="1",
    )


def make_invite(
    tracker: TrackerProcess, capsys: pytest.CaptureFixture[str], *, uses: int = 5
) -> str:
    from tracker_service.cli.commands import main

    capsys.readouterr()
    argv = ["invite", "create", "--db", tracker.db_url, "--tracker-url", tracker.url]
    assert main([*argv, "--uses", str(uses), "--json"]) == 0
    link: str = json.loads(capsys.readouterr().out)["link"]
    return link


def make_app(qtbot: Any, tmp_path: Path) -> MeshNetApp:
    """A fresh profile: no settings saved, no network joined, no tray."""
    from tests.app.ui.test_main import NoProbes, StubApp, Usage

    store = SettingsStore(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    app = MeshNetApp(
        StubApp(),  # type: ignore[arg-type]
        store=store,
        probes=NoProbes(),
        usage=Usage(),
        tray_available=False,
        state=QSettings(str(tmp_path / "state.ini"), QSettings.Format.IniFormat),
    )
    qtbot.addWidget(app.status_window)
    return app


def open_wizard(qtbot: Any, app: MeshNetApp) -> DoctorWizard:
    qtbot.waitUntil(lambda: isinstance(app._windows.get("doctor"), DoctorWizard), timeout=5000)
    wizard = app._windows["doctor"]
    assert isinstance(wizard, DoctorWizard)
    qtbot.addWidget(wizard)
    return wizard
