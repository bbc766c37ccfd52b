"""The app under a real X server with a real system tray (Xvfb + trayer).

The tray icon is embedded in trayer, a right-click opens its menu, and clicking
Contribute starts the node, which registers with a real tracker on loopback.
Skipped, saying why, where Xvfb, trayer or xdotool are not installed
(.ci/install-desktop.sh installs them in CI).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.conftest import CHILD_KEYRING
from tests.tracker_service.server_process import REPO, TrackerProcess

pytestmark = pytest.mark.slow

TOOLS = ("Xvfb", "trayer", "xdotool")


def _free_display() -> int:
    for number in range(90, 200):
        if (
            not Path(f"/tmp/.X11-unix/X{number}").exists()
            and not Path(f"/tmp/.X{number}-lock").exists()
        ):
            return number
    raise RuntimeError("no free X display number between :90 and :199")


@pytest.fixture
def desktop(tmp_path: Path) -> Iterator[str]:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.skip(
            f"{', '.join(missing)} not installed; run .ci/install-desktop.sh "
            "(Debian: xvfb trayer xdotool libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1)"
        )
    display = f":{_free_display()}"
    log = (tmp_path / "desktop.log").open("wb")
    xvfb = subprocess.Popen(
        ["Xvfb", display, "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        stdout=log,
        stderr=log,
    )
    env = {**os.environ, "DISPLAY": display}
    deadline = time.monotonic() + 20
    while not Path(f"/tmp/.X11-unix/X{display[1:]}").exists():
        assert xvfb.poll() is None, "Xvfb exited"
        assert time.monotonic() < deadline, "Xvfb did not start"
        time.sleep(0.1)
    trayer = subprocess.Popen(
        ["trayer", "--edge", "top", "--align", "right", "--widthtype", "request", "--height", "24"],
        env=env,
        stdout=log,
        stderr=log,
    )
    time.sleep(1.0)  # trayer claims the tray selection
    try:
        yield display
    finally:
        for process in (trayer, xvfb):
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
        log.close()


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
