"""The wizard's working pages: a child that crashes twice in a row gets one sentence
and Copy diagnostics, not another Retry (a real child process that dies importing)."""

from __future__ import annotations

import sys
from typing import Any

from PySide6.QtGui import QGuiApplication

from app.texts import text
from app.ui.screens.doctor.child_page import ChildPage
from app.ui.screens.doctor.state import WizardState

CRASH = "raise ImportError('cannot import name RequestLineTooLong from websockets')"


class CrashingPage(ChildPage):
    def argv(self) -> list[str]:
        return [sys.executable, "-c", CRASH]

    def on_finished(self, exit_code: int, stdout: str) -> bool:
        self.status.setText(self.last_error_sentence("It did not work."))
        return exit_code == 0


def test_two_crashes_in_a_row_offer_copy_diagnostics_not_retry(qtbot: Any) -> None:
    page = CrashingPage(WizardState(), lambda *a: [], "Test")
    qtbot.addWidget(page)
    page.show()
    page.start()
    qtbot.waitUntil(lambda: not page.busy and page.retry_button.isVisible(), timeout=30_000)
    assert not page.copy_button.isVisible() and page.crashes_in_a_row == 1
    page.retry_button.click()
    qtbot.waitUntil(lambda: not page.busy and page.copy_button.isVisible(), timeout=30_000)
    assert not page.retry_button.isVisible()
    assert page.status.text() == text("why.crashed-twice")
    page.copy_button.click()
    assert "RequestLineTooLong" in QGuiApplication.clipboard().text()
