"""Drives the real app under a real X server and tray, as a user's mouse would.

Run by tests/app/ui/test_real_tray.py as its own process (pytest's Qt runs
offscreen): builds the app with the xcb platform, waits for the tray icon to be
embedded, right-clicks it with xdotool, clicks "Contribute" in the menu that
opens, and waits for the node child to start serving. Prints one JSON line of
what it saw and exits 0 (non-zero only when it could not run at all).

    python tests/app/ui/real_tray_driver.py SETTINGS_INI STATE_INI USAGE_JSON
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication, QSystemTrayIcon

from app.pause_rules import ProbeReadings
from app.ui.main import MeshNetApp
from app.ui.settings_store import SettingsStore
from app.usage_history import UsageHistory

SERVING_TIMEOUT_MS = 240_000


class QuietProbes:
    def read(self, node_pid: int | None) -> ProbeReadings:
        return ProbeReadings()


def xdotool(*args: str) -> None:
    subprocess.run(["xdotool", *args], check=True, timeout=10)


def main() -> int:
    settings_ini, state_ini, usage_json = sys.argv[1:4]
    qapp = QApplication(["meshnet-app"])
    seen: dict[str, Any] = {
        "platform": qapp.platformName(),
        "tray_available": QSystemTrayIcon.isSystemTrayAvailable(),
        "states": [],
    }
    app = MeshNetApp(
        qapp,
        store=SettingsStore(QSettings(settings_ini, QSettings.Format.IniFormat)),
        probes=QuietProbes(),
        usage=UsageHistory(Path(usage_json)),
        state=QSettings(state_ini, QSettings.Format.IniFormat),
    )
    seen["has_tray"] = app.has_tray

    def finish() -> None:
        seen["final_state"] = app.controller.status.state
        seen["registration"] = app.controller.status.registration
        print(json.dumps(seen, default=str), flush=True)
        app.controller.stop()
        app.controller.wait_for_exit(30_000)
        qapp.exit(0)

    if app.tray is None:
        QTimer.singleShot(0, finish)
        qapp.exec()
        return 0
    tray = app.tray
    app.controller.state_changed.connect(lambda state: seen["states"].append(state))

    def click_contribute() -> None:
        menu = tray.menu
        seen["menu_visible"] = menu.isVisible()
        action = app.actions.contribute
        rect = menu.actionGeometry(action)
        centre = menu.mapToGlobal(rect.center())
        xdotool("mousemove", str(centre.x()), str(centre.y()))
        xdotool("click", "1")

    def right_click_icon() -> None:
        geometry = tray.icon.geometry()
        seen["icon_visible"] = tray.icon.isVisible()
        seen["icon_geometry"] = [geometry.x(), geometry.y(), geometry.width(), geometry.height()]
        if geometry.isEmpty():
            finish()
            return
        centre = geometry.center()
        xdotool("mousemove", str(centre.x()), str(centre.y()))
        xdotool("click", "3")
        QTimer.singleShot(1500, click_contribute)

    def on_state(state: str) -> None:
        if state in ("serving", "refused", "error"):
            QTimer.singleShot(0, finish)

    app.controller.state_changed.connect(on_state)
    app.show_initial(hidden=True)
    QTimer.singleShot(2000, right_click_icon)
    QTimer.singleShot(SERVING_TIMEOUT_MS, finish)
    qapp.exec()
    return 0


if __name__ == "__main__":
    sys.exit(main())
