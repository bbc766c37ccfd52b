"""The contributor app end to end: a real tracker on loopback, a real node child
on the real default model, the app's real controller and windows.

- Contribute on → serving, the status rows fill in the order the node passes
  its gates → Contribute off → the tracker no longer lists the node.
- kill -9 the app while its node serves: the node exits by itself within
  seconds (its stdin pipe closes) and the tracker stops routing to it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from tests.app.conftest import CHILD_KEYRING
from tests.tracker_service.server_process import REPO, TrackerProcess

pytestmark = pytest.mark.slow


def tracker_nodes(url: str) -> list[dict[str, Any]]:
    state = httpx.get(url + "/api/v1/state", timeout=5).json()
    return list(state.get("nodes", []))


def live_node_ids(url: str) -> set[str]:
    return {n["node_id"] for n in tracker_nodes(url) if n.get("live")}


class QuietProbes:
    """Pause-rule probes that read nothing: this test is about contributing."""

    def read(self, node_pid: int | None) -> Any:
        from app.pause_rules import ProbeReadings

        return ProbeReadings()


def test_contribute_on_serves_and_off_leaves_the_tracker(
    qtbot: Any, tmp_path: Path, tracker: TrackerProcess, default_model_dir: Path, child_env: None
) -> None:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app.settings_model import AppSettings
    from app.status_model import GATE_ORDER
    from app.ui.main import MeshNetApp
    from app.ui.settings_store import SettingsStore
    from app.usage_history import UsageHistory

    store = SettingsStore(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    store.save(AppSettings(tracker_url=tracker.url, model=str(default_model_dir), layers=(0, 30)))
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
    first_seen: list[str] = []

    def gate_seen(name: str) -> None:
        if name not in first_seen:
            first_seen.append(name)

    app.controller.gate_changed.connect(gate_seen)
    try:
        app.show_initial()
        app.set_contributing(True)
        qtbot.waitUntil(lambda: app.controller.status.state == "serving", timeout=240_000)
        status = app.controller.status
        node_id = str((status.registration or {}).get("node_id", ""))
        assert node_id, f"serving without a registration: {status.registration}"
        assert node_id in live_node_ids(tracker.url)
        # The rows fill in the order the node passes the gates (layers were given, so
        # no placement gate); the status view lists them in that same order.
        start_gates = ["identity", "capability", "admission", "data-plane", "registration"]
        assert [g for g in GATE_ORDER if g in start_gates] == start_gates
        passed_in_order = [g for g in first_seen if g in start_gates]
        assert passed_in_order == start_gates, first_seen
        for gate in start_gates:
            assert status.gates[gate].gate_state == "passed", (gate, status.gates[gate])
        # The tracker's reachability check comes back through the heartbeat reply.
        qtbot.waitUntil(
            lambda: app.controller.status.gates["reachability"].gate_state == "passed",
            timeout=60_000,
        )
        report_age = status.report_age()
        assert report_age is not None and report_age < 900

        app.set_contributing(False)
        qtbot.waitUntil(lambda: not app.controller.running, timeout=60_000)
        assert node_id not in live_node_ids(tracker.url)
    finally:
        app.controller.kill()
        app.status_window.close()


def _write_app_settings(config_home: Path, settings: dict[str, Any]) -> None:
    """The settings a user would have saved, where QSettings reads them on Linux."""
    from PySide6.QtCore import QSettings

    from app.settings_model import AppSettings
    from app.ui.main import CONTRIBUTE_KEY
    from app.ui.settings_store import SettingsStore

    path = config_home / "MeshNet" / "MeshNet.conf"
    path.parent.mkdir(parents=True, exist_ok=True)
    qsettings = QSettings(str(path), QSettings.Format.IniFormat)
    store = SettingsStore(qsettings)  # owns qsettings: keep it alive while writing
    store.save(AppSettings(**settings))
    qsettings.setValue(CONTRIBUTE_KEY, "true")
    qsettings.sync()


def test_kill_9_of_the_app_takes_its_node_off_the_network(
    tmp_path: Path, tracker: TrackerProcess, default_model_dir: Path
) -> None:
    config_home = tmp_path / "config"
    _write_app_settings(
        config_home,
        {"tracker_url": tracker.url, "model": str(default_model_dir), "layers": (0, 30)},
    )
    env = dict(os.environ)
    env.update(
        {
            "QT_QPA_PLATFORM": "offscreen",
            "XDG_CONFIG_HOME": str(config_home),
            "MESHNET_HOME": str(tmp_path / "meshnet-home"),
            "PYTHON_KEYRING_BACKEND": CHILD_KEYRING,
            "PYTHONPATH": str(REPO),
        }
    )
    app = subprocess.Popen(
        [sys.executable, "-m", "app.ui.main"],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 240
        node_ids: set[str] = set()
        while time.monotonic() < deadline and not node_ids:
            assert app.poll() is None, f"the app exited with {app.returncode}"
            node_ids = live_node_ids(tracker.url)
            time.sleep(0.5)
        assert node_ids, "the app's node never registered"
        (node_id,) = node_ids
        children = psutil.Process(app.pid).children(recursive=True)
        nodes = [c for c in children if "app.cli.node" in " ".join(c.cmdline())]
        assert len(nodes) == 1, [c.cmdline() for c in children]
        node = nodes[0]

        app.send_signal(signal.SIGKILL)
        app.wait(10)
        killed_at = time.monotonic()
        gone, _alive = psutil.wait_procs([node], timeout=30)
        assert node in gone, "the node outlived the app by 30 s"
        print(f"node exited {time.monotonic() - killed_at:.1f} s after the app's kill -9")
        # It deregistered on its way out; routes are formed from live nodes only.
        assert node_id not in live_node_ids(tracker.url)
    finally:
        if app.poll() is None:
            app.kill()
        for child in psutil.Process().children(recursive=True):
            if "app.cli.node" in " ".join(child.cmdline()):
                child.kill()
