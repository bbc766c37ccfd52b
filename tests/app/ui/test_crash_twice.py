"""A node child that crashes twice in a row: one sentence and Copy diagnostics, no
endless Retry, and the traceback wraps in Details.

The child is the real ``meshnet-node run`` the app builds from its settings, dying
the way it did on a desktop whose websockets was too old for the data plane: an
ImportError while importing (here a ``websockets`` that cannot be imported is put
first on the child's path).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QPlainTextEdit

from app.settings_model import AppSettings
from app.texts import text
from app.ui.controller import CRASHED_TWICE, NodeController
from app.ui.settings_store import SettingsStore
from tests.app.ui.screens.test_status_window import window_for
from tests.tracker_service.server_process import REPO

BROKEN = "raise ImportError(\"cannot import name 'RequestLineTooLong' from 'websockets'\")\n"


@pytest.fixture
def broken_websockets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shadow = tmp_path / "shadow" / "websockets"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(BROKEN)
    monkeypatch.setenv("PYTHONPATH", f"{shadow.parent}:{REPO}")


def test_a_child_that_crashes_twice_gets_copy_diagnostics_not_retry(
    qtbot: Any, tmp_path: Path, broken_websockets: None
) -> None:
    store = SettingsStore(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    store.save(AppSettings(tracker_url="http://127.0.0.1:9"))
    controller = NodeController(store)
    window, _actions = window_for(qtbot, controller)
    window.show()

    with qtbot.waitSignal(controller.crashed, timeout=60_000):
        controller.start()
    assert controller.status.reason == "crashed" and not controller.gave_up
    assert window.retry_button.isVisible() and not window.banner_copy_button.isVisible()

    with qtbot.waitSignal(controller.crashed, timeout=60_000):
        window.retry_button.click()
    assert controller.gave_up and controller.status.reason == CRASHED_TWICE
    assert not window.retry_button.isVisible()
    assert window.banner_copy_button.isVisible()
    assert window.sentence_label.text() == text("why.crashed-twice")

    window.banner_copy_button.click()
    copied = QGuiApplication.clipboard().text()
    assert "RequestLineTooLong" in copied  # the traceback's last line, for whoever helps
    window.show_details()
    window.details.tabs.setCurrentWidget(window.details.log_view)
    assert window.details.log_view.lineWrapMode() == QPlainTextEdit.LineWrapMode.WidgetWidth
    assert "RequestLineTooLong" in window.details.log_view.toPlainText()
    # nothing to scroll sideways, even for a long path in the traceback
    log_view = window.details.log_view
    qtbot.waitUntil(lambda: log_view.horizontalScrollBar().maximum() == 0, timeout=5000)


def test_serving_in_between_starts_the_count_again(qtbot: Any, tmp_path: Path) -> None:
    from tests.app.ui.test_controller import _kill_children, _live, fake_controller  # noqa: F401

    controller = fake_controller(qtbot, tmp_path, mode="crash")
    with qtbot.waitSignal(controller.crashed, timeout=15000):
        controller.start()
    assert controller.crashes_in_a_row == 1
    controller.handle_event({"kind": "state", "state": "serving", "message": "Serving"})
    assert controller.crashes_in_a_row == 0
