"""Leave this network, for real: the app's own controller runs a real node child
that joined a real tracker on loopback with an invite and serves the default model;
Leave stops it, the tracker lists it as deregistered (no longer live), the join
credential is forgotten, and the app says in plain words what it kept, which is
really still there (the node's key)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QMessageBox

from app.network_join import app_identity, join_and_save
from app.texts import text
from core.identity.keystore import DEFAULT_PROFILE
from core.network.joined_network import load_joined_network, network_file
from tests.app.ui.join_support import (
    NAME,
    QuietProbes,
    make_invite,
    start_serving_network,
    use_file_keyring,
)
from tests.tracker_service.server_process import TrackerProcess

pytestmark = pytest.mark.slow


@pytest.fixture
def shared_keyring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from use_file_keyring(tmp_path, monkeypatch)


@pytest.fixture
def network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TrackerProcess]:
    yield from start_serving_network(tmp_path, monkeypatch)


def tracker_node(url: str, node_id: str) -> dict[str, Any] | None:
    nodes = httpx.get(url + "/api/v1/state", timeout=5).json().get("nodes", [])
    return next((n for n in nodes if n.get("node_id") == node_id), None)


def test_leave_deregisters_forgets_the_invite_and_says_what_was_kept(
    qtbot: Any,
    tmp_path: Path,
    shared_keyring: None,
    network: TrackerProcess,
    default_model_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app.settings_model import AppSettings
    from app.ui.main import MeshNetApp
    from app.ui.settings_store import SettingsStore
    from app.usage_history import UsageHistory

    join_and_save(make_invite(network, capsys))  # what the join page's Join does
    key_before = app_identity().node_id
    store = SettingsStore(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    store.save(AppSettings(model=str(default_model_dir), layers=(0, 30)))
    qapp = QApplication.instance()
    assert isinstance(qapp, QApplication)
    app = MeshNetApp(
        qapp,
        store=store,
        probes=QuietProbes(),
        usage=UsageHistory(tmp_path / "usage.json"),
        tray_available=False,
        state=QSettings(str(tmp_path / "state.ini"), QSettings.Format.IniFormat),
    )
    asked: list[str] = []
    said: list[str] = []

    def question(_parent: Any, _title: str, words: str) -> QMessageBox.StandardButton:
        asked.append(words)
        return QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QMessageBox, "question", question)
    monkeypatch.setattr(QMessageBox, "information", lambda _p, _t, words: said.append(words))
    try:
        app.show_initial()
        app.set_contributing(True)
        qtbot.waitUntil(lambda: app.controller.status.state == "serving", timeout=300_000)
        node_id = str((app.controller.status.registration or {}).get("node_id", ""))
        assert node_id == key_before  # it serves with the key that joined
        node = tracker_node(network.url, node_id)
        assert node is not None and node["live"], node

        app.actions.leave.trigger()
        qtbot.waitUntil(lambda: said != [], timeout=60_000)
        node = tracker_node(network.url, node_id)
        assert node is not None and node["state"] == "deregistered" and not node["live"], node
        assert not app.controller.running
        # The join credential (the network file with its join token) is forgotten.
        assert load_joined_network(DEFAULT_PROFILE) is None
        assert not network_file(DEFAULT_PROFILE).exists()
        # Plain words: what it asked, and what it kept, which is kept indeed.
        assert asked == [text("leave.confirm", name=NAME)]
        assert said == [text("leave.done", name=NAME)]
        assert "its key, your settings" in said[0]
        assert app_identity().node_id == key_before
        assert store.load().model == str(default_model_dir)
        assert not app.contribute_wish()
        qtbot.waitUntil(
            lambda: app.status_window.network_label.text() == text("status.network.none"),
            timeout=10_000,
        )
    finally:
        app.controller.kill()
        app.status_window.close()
