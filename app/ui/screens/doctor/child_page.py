"""The base of the doctor wizard's working pages: one ``meshnet-node`` child each.

A page that does work runs one command through a
:class:`~app.ui.json_child.JsonChild` and stays incomplete (Next disabled) until
it has finished; the wizard also holds Back while a page is busy. Every page
keeps its logic in plain methods (``apply_hardware``, ``finish_test``...) so a
test, or the screenshot mode, can drive it without a child.
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QPushButton, QVBoxLayout, QWizardPage

from app.event_words import progress_sentence
from app.texts import text
from app.ui.json_child import JsonChild, last_error_sentence, progress_fraction
from app.ui.screens.doctor.state import NodeCommand, WizardState
from app.ui.widgets.labels import wrapping_label

log = logging.getLogger(__name__)


class ChildPage(QWizardPage):
    """A page whose work is one child command: busy while it runs, complete when it is done."""

    busy_changed = Signal(bool)
    succeeded = Signal()  # the work finished and the page is complete
    # How long a cancelled child may take to stop by itself before it is killed.
    kill_after_s = 8.0
    # The node's own progress sentences may name layers and gates: a page that
    # keeps to plain words shows its own sentence and leaves the node's on hover.
    shows_node_messages = True
    # A child that crashes (a traceback) this many times in a row gets Copy
    # diagnostics instead of another Retry.
    crashes_before_giving_up = 2

    def __init__(self, state: WizardState, node_command: NodeCommand, title: str) -> None:
        super().__init__()
        self.state = state
        self.node_command = node_command
        self.setTitle(title)
        self.child: JsonChild | None = None
        self.ok = False
        self.progress_events = 0  # in the current run
        self.layout_ = QVBoxLayout(self)
        self.status = wrapping_label()
        self.progress = QProgressBar()
        self.progress.setFormat(text("percent", value="%p"))  # "58 %" in German
        self.progress.setTextVisible(True)
        self.cancel_button = QPushButton(text("child.cancel"))
        self.cancel_button.clicked.connect(self.cancel)
        self.retry_button = QPushButton(text("child.retry"))
        self.retry_button.clicked.connect(self.start)
        self.crashes_in_a_row = 0
        self.copy_button = QPushButton(text("details.copy"))
        self.copy_button.setToolTip(text("details.copy.tip"))
        self.copy_button.clicked.connect(self.copy_diagnostics)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.retry_button)
        buttons.addWidget(self.copy_button)
        self.layout_.addWidget(self.status)
        self.layout_.addWidget(self.progress)
        self.layout_.addLayout(buttons)
        self._set_idle()

    @property
    def busy(self) -> bool:
        return self.child is not None and self.child.running

    def isComplete(self) -> bool:
        return self.ok and not self.busy

    def initializePage(self) -> None:
        if not self.state.sample:
            self.start()

    def cleanupPage(self) -> None:
        self.cancel()

    def argv(self) -> list[str]:
        raise NotImplementedError

    def start(self) -> None:
        if self.busy:
            return
        self.ok = False
        self.progress_events = 0
        self.before_start()
        self._run_started_at = len(self.state.extra.get("log", []))
        self.child = JsonChild(self, kill_after_s=self.kill_after_s)
        self.child.event.connect(self.on_event)
        self.child.log_line.connect(self.on_log_line)
        self.child.finished.connect(self._on_finished)
        self.cancel_button.setVisible(True)
        self.retry_button.setVisible(False)
        self.progress.setVisible(True)
        self.progress.setRange(0, 0)  # busy until the first progress event
        self.child.start(self.argv())
        self._changed()

    def cancel(self) -> None:
        if self.busy:
            assert self.child is not None
            self.status.setText(text("child.stopping"))
            self.cancel_button.setEnabled(False)
            self.child.cancel()

    def before_start(self) -> None:
        """Reset what the page shows before a (new) run."""

    def on_event(self, event: dict[str, Any]) -> None:
        if event.get("kind") == "progress":
            self.progress_events += 1
            self.show_progress(event)

    def on_log_line(self, line: str) -> None:
        log.debug("child: %s", line)
        self.state.extra.setdefault("log", []).append(line)

    def show_progress(self, event: dict[str, Any]) -> None:
        fraction = progress_fraction(event)
        if fraction is not None:
            done, total = fraction
            self.progress.setRange(0, total)
            self.progress.setValue(done)
        if event.get("message"):
            # said from the event's stage code, in the user's language (app/event_words.py)
            sentence = progress_sentence(event)
            if self.shows_node_messages:
                self.status.setText(sentence)
            else:
                self.progress.setToolTip(sentence)

    def _on_finished(self, exit_code: int, stdout: str) -> None:
        cancelled = self.child is not None and self.child.cancelled
        self._set_idle()
        if cancelled:
            self.ok = False
            self.on_cancelled()
            self.retry_button.setVisible(True)
        else:
            self.ok = self.on_finished(exit_code, stdout)
            self.retry_button.setVisible(not self.ok)
            self._count_crash()
        self._changed()
        if self.ok:
            self.succeeded.emit()

    def _count_crash(self) -> None:
        """Two crashes in a row: one sentence and Copy diagnostics, no endless Retry."""
        lines = self.state.extra.get("log", [])[getattr(self, "_run_started_at", 0) :]
        crashed = not self.ok and any(line.startswith("Traceback") for line in lines)
        self.crashes_in_a_row = self.crashes_in_a_row + 1 if crashed else 0
        if self.crashes_in_a_row >= self.crashes_before_giving_up:
            self.status.setText(text("why.crashed-twice"))
            self.retry_button.setVisible(False)
            self.copy_button.setVisible(True)

    def copy_diagnostics(self) -> None:
        """The child's last lines (the traceback) for whoever helps."""
        lines = self.state.extra.get("log", [])[-200:]
        QGuiApplication.clipboard().setText("\n".join(lines))

    def on_finished(self, exit_code: int, stdout: str) -> bool:
        """Judge the finished command; True when the page's work is done."""
        raise NotImplementedError

    def on_cancelled(self) -> None:
        self.status.setText(text("child.stopped"))

    def last_error_sentence(self, fallback: str) -> str:
        """The child's own sentence for a failure (``meshnet-node: ... [reason]``)."""
        return last_error_sentence(self.state.extra.get("log", []), fallback)

    def _set_idle(self) -> None:
        self.cancel_button.setVisible(False)
        self.cancel_button.setEnabled(True)
        self.retry_button.setVisible(False)
        self.copy_button.setVisible(False)
        self.progress.setVisible(False)

    def _changed(self) -> None:
        self.completeChanged.emit()
        self.busy_changed.emit(self.busy)
