"""Without a system tray, Quit, closing the window and SIGTERM end the app once,
after the node has left the network (bounded), and an idle app stays idle.

The stand-in application does what Qt 6's quit() does: it asks every visible
window to close and gives up when one declines. The status window, which is the
app without a tray, used to decline and ask to quit again, forever.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication

from app.ui import main as app_main
from app.ui.main import MeshNetApp
from app.ui.quit_signals import QuitOnSignal
from tests.app.ui.test_controller import _kill_children, _live, fake_controller  # noqa: F401
from tests.app.ui.test_main import make_app

IDLE_MS = 3000


class QtSixQuit(QObject):
    """Stands in for QApplication: quit() closes windows first, as Qt 6's does."""

    aboutToQuit = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.quit_calls = 0
        self.exits: list[int] = []

    def setQuitOnLastWindowClosed(self, _value: bool) -> None:
        pass

    def quit(self) -> None:
        self.quit_calls += 1
        if self.quit_calls > 100:
            raise AssertionError("quit() keeps being called: the app is looping")
        for window in QApplication.topLevelWidgets():
            if window.isVisible() and not window.close():
                return  # a window declined: Qt 6 does not quit
        self.exits.append(0)  # quit() is exit(0) once every window has closed

    def exit(self, code: int = 0) -> None:
        self.exits.append(code)


def app_without_tray(qtbot: Any, tmp_path: Path, **kwargs: Any) -> tuple[MeshNetApp, QtSixQuit]:
    qapp = QtSixQuit()
    app, _stub = make_app(qtbot, tmp_path, **kwargs)
    app.qapp = qapp  # type: ignore[assignment]
    return app, qapp


@pytest.mark.parametrize("how", ["quit-action", "close-window"])
def test_without_a_tray_quit_and_close_end_the_app_once(
    qtbot: Any, tmp_path: Path, how: str
) -> None:
    app, qapp = app_without_tray(qtbot, tmp_path)
    asked: list[bool] = []
    app.status_window.quit_requested.connect(lambda: asked.append(True))
    app.show_initial()
    assert app.status_window.isVisible()
    if how == "quit-action":
        app.actions.quit.trigger()
    else:
        app.status_window.close()
    qtbot.waitUntil(lambda: qapp.exits == [0], timeout=5000)
    qtbot.wait(300)  # nothing keeps asking afterwards
    assert qapp.exits == [0]
    assert len(asked) <= 1
    assert app.status_window.close()  # the window now closes for good


def test_quit_waits_for_the_node_to_leave_and_no_longer(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A node that ignores "stop" is killed after QUIT_TIMEOUT_S, and the app ends."""
    monkeypatch.setattr(app_main, "QUIT_TIMEOUT_S", 1.0)
    controller = fake_controller(qtbot, tmp_path, mode="ignore-stop", stop_timeout_s=600.0)
    app, qapp = app_without_tray(qtbot, tmp_path, controller=controller)
    app.show_initial()
    app.actions.contribute.trigger()
    qtbot.waitUntil(lambda: controller.status.state == "serving", timeout=15000)
    app.status_window.close()
    app.status_window.close()  # impatient: asking twice starts nothing new
    assert qapp.exits == [] and controller.running
    qtbot.waitUntil(lambda: qapp.exits == [0], timeout=20000)
    assert not controller.running


def test_sigterm_quits_like_the_quit_command(qtbot: Any, tmp_path: Path) -> None:
    app, qapp = app_without_tray(qtbot, tmp_path)
    app.show_initial()
    signals = QuitOnSignal(app.request_quit)
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        qtbot.waitUntil(lambda: qapp.exits == [0], timeout=5000)
    finally:
        signals.uninstall()


def test_an_idle_app_without_a_tray_stays_idle(qtbot: Any, tmp_path: Path) -> None:
    app, _qapp = app_without_tray(qtbot, tmp_path)
    app.show_initial()
    qtbot.wait(500)  # start-up work
    before = time.process_time()
    qtbot.wait(IDLE_MS)
    used = time.process_time() - before
    # a generous bound for a test process; the X server test measures the 1 %
    assert used < IDLE_MS / 1000 * 0.05, f"{used:.3f} s of CPU in {IDLE_MS} ms"
