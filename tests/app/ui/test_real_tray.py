"""The app under a real X server with a real system tray (Xvfb + trayer).

The tray icon is embedded in trayer, a right-click opens its menu, and clicking
Contribute starts the node, which registers with a real tracker on loopback.
Skipped, saying why, where Xvfb, trayer or xdotool are not installed
(.ci/install-desktop.sh installs them in CI).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.conftest import CHILD_KEYRING
from tests.app.ui.x_desktop import x_desktop
from tests.tracker_service.server_process import REPO, TrackerProcess

pytestmark = pytest.mark.slow


@pytest.fixture
def desktop(tmp_path: Path) -> Iterator[str]:
    with x_desktop(tmp_path, tray=True) as display:
        yield display


def test_tray_menu_contribute_starts_the_node(
    tmp_path: Path,
    desktop: str,
    tracker: TrackerProcess,
    default_model_dir: Path,
) -> None:
    from PySide6.QtCore import QSettings

    from app.settings_model import AppSettings
    from app.ui.settings_store import SettingsStore

    settings_ini = tmp_path / "settings.ini"
    store = SettingsStore(QSettings(str(settings_ini), QSettings.Format.IniFormat))
    store.save(AppSettings(tracker_url=tracker.url, model=str(default_model_dir), layers=(0, 30)))
    env = {
        **os.environ,
        "DISPLAY": desktop,
        "QT_QPA_PLATFORM": "xcb",
        "PYTHONPATH": str(REPO),
        "PYTHON_KEYRING_BACKEND": CHILD_KEYRING,
        "MESHNET_HOME": str(tmp_path / "meshnet-home"),
    }
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "tests" / "app" / "ui" / "real_tray_driver.py"),
            str(settings_ini),
            str(tmp_path / "state.ini"),
            str(tmp_path / "usage.json"),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    assert result.returncode == 0 and lines, result.stderr[-3000:]
    seen = json.loads(lines[-1])
    assert seen["platform"] == "xcb"
    assert seen["tray_available"] and seen["has_tray"], seen
    assert seen["icon_visible"], seen
    _x, _y, width, height = seen["icon_geometry"]
    assert width > 0 and height > 0, seen
    assert seen.get("menu_visible"), f"right-clicking the icon opened no menu: {seen}"
    assert seen["final_state"] == "serving", seen
    assert seen["registration"] and seen["registration"].get("node_id"), seen
