"""The Status window: what the node is doing, gate by gate, in plain sentences.

It reads ``controller.status`` only (never the event stream) and refreshes
when the controller says the status changed, plus once a second for the
clocks (the capability report's age and time left before it goes stale,
the uptime). Where the desktop has no system tray this is the main window:
it then carries the tray's actions in a toolbar, and closing it quits.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QFont, QGuiApplication, QShowEvent
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from app.status_model import (
    FAILED_STATES,
    GATE_ORDER,
    GATE_TITLES,
    diagnostics_text,
    format_count,
    format_duration,
    gate_sentence,
    headline,
    tray_state,
)
from app.ui.actions import AppActions
from app.ui.controller import NodeController
from app.ui.errors import guarded
from app.ui.widgets.credit_card import CreditCard
from app.ui.widgets.icons import app_icon, gate_icon, tray_icon
from app.ui.widgets.usage_chart import UsageChart

log = logging.getLogger(__name__)

COLUMN_SENTENCE = 1
GATE_STATE_WORDS = {
    "passed": "Passed",
    "failed": "Failed",
    "pending": "In progress",
    "info": "For your information",
    "waiting": "Not reached yet",
}
CHART_REFRESH_MS = 60_000


def _stat(title: str) -> tuple[QFrame, QLabel]:
    frame = QFrame()
    frame.setObjectName("stat")
    layout = QVBoxLayout(frame)
    layout.setContentsMargins(12, 8, 12, 8)
    value = QLabel("—")
    font = QFont(value.font())
    font.setPointSizeF(font.pointSizeF() * 1.5)
    font.setBold(True)
    value.setFont(font)
    caption = QLabel(title)
    caption.setObjectName("caption")
    layout.addWidget(value)
    layout.addWidget(caption)
    return frame, value


class StatusWindow(QMainWindow):
    """Live admission status, numbers, chart, node log and Copy diagnostics."""

    quit_requested = Signal()

    def __init__(
        self,
        controller: NodeController,
        actions: AppActions,
        *,
        usage: Any | None = None,
        main_window: bool = False,
        versions: Mapping[str, str] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._controller = controller
        self._actions = actions
        self._usage = usage
        self._main_window = main_window
        self._versions = dict(versions or {})
        self._pause_sentence = ""
        self.setWindowTitle("MeshNet")
        self.setWindowIcon(app_icon())
        self.resize(820, 760)
        self._build()
        if main_window:
            self._build_toolbar()
        controller.status_changed.connect(self.refresh)
        controller.log_line.connect(self._append_log)
        self._clock = QTimer(self)
        self._clock.setInterval(1000)
        self._clock.timeout.connect(self._tick)
        self._clock.start()
        self._chart_timer = QTimer(self)
        self._chart_timer.setInterval(CHART_REFRESH_MS)
        self._chart_timer.timeout.connect(self.refresh_chart)
        self._chart_timer.start()
        controller.stats_received.connect(self._stats)
        for line in controller.status.log_lines:
            self.log_view.appendPlainText(line)
        self.refresh()
        self.refresh_chart()

    # --- building --------------------------------------------------------
    def _build(self) -> None:
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(16, 16, 16, 12)
        layout.setSpacing(12)
        layout.addWidget(self._build_banner())
        stats = QHBoxLayout()
        stats.setSpacing(10)
        tokens_frame, self.tokens_label = _stat("tokens served")
        sessions_frame, self.sessions_label = _stat("open sessions")
        uptime_frame, self.uptime_label = _stat("serving for")
        for frame in (tokens_frame, sessions_frame, uptime_frame):
            stats.addWidget(frame)
        layout.addLayout(stats)
        self.credit_card = CreditCard(lambda: self._controller.status.registration)
        layout.addWidget(self.credit_card)
        gates_title = QLabel("Admission, step by step")
        gates_title.setObjectName("section")
        layout.addWidget(gates_title)
        layout.addWidget(self._build_gates())
        self.tabs = QTabWidget()
        self.chart = UsageChart()
        self.tabs.addTab(self.chart, "Tokens served, last 7 days")
        self.log_view = QPlainTextEdit()
        self.log_view.setReadOnly(True)
        self.log_view.setMaximumBlockCount(500)
        self.log_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.log_view.setPlaceholderText("The node's messages appear here while it runs.")
        self.tabs.addTab(self.log_view, "Node log")
        layout.addWidget(self.tabs, 2)
        bottom = QHBoxLayout()
        self.rules_label = QLabel("")
        self.rules_label.setObjectName("caption")
        self.rules_label.setWordWrap(True)
        self.copy_button = QPushButton("Copy diagnostics")
        self.copy_button.setToolTip(
            "Copy the status, the gates, the report and the last log lines, "
            "to paste into a message to someone helping you"
        )
        self.copy_button.clicked.connect(self.copy_diagnostics)
        bottom.addWidget(self.rules_label, 1)
        bottom.addWidget(self.copy_button)
        layout.addLayout(bottom)
        self.setCentralWidget(central)
        self.setStyleSheet(
            "#banner { border-radius: 8px; background: palette(alternate-base); }"
            '#banner[look="error"] { background: #fdecec; }'
            '#banner[look="serving"] { background: #e8f6ee; }'
            '#banner[look="paused"] { background: #fdf3e1; }'
            "#stat, #gates { border: 1px solid palette(mid); border-radius: 6px; }"
            "#gates { background: palette(base); }"
            "#gate-title { font-weight: bold; }"
            "#reason { font-family: monospace; color: #8a4b00; }"
            "#caption { color: palette(placeholder-text); }"
            "#section { font-weight: bold; }"
        )

    def _build_banner(self) -> QFrame:
        self.banner = QFrame()
        self.banner.setObjectName("banner")
        row = QHBoxLayout(self.banner)
        row.setContentsMargins(14, 12, 14, 12)
        row.setSpacing(14)
        self.state_icon = QLabel()
        self.state_icon.setFixedSize(48, 48)
        row.addWidget(self.state_icon, 0, Qt.AlignmentFlag.AlignTop)
        words = QVBoxLayout()
        words.setSpacing(4)
        self.headline_label = QLabel()
        font = QFont(self.headline_label.font())
        font.setPointSizeF(font.pointSizeF() * 1.35)
        font.setBold(True)
        self.headline_label.setFont(font)
        self.headline_label.setWordWrap(True)
        self.sentence_label = QLabel()
        self.sentence_label.setWordWrap(True)
        self.sentence_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        words.addWidget(self.headline_label)
        words.addWidget(self.sentence_label)
        row.addLayout(words, 1)
        buttons = QVBoxLayout()
        self.contribute_button = QPushButton("Start contributing")
        self.contribute_button.setMinimumWidth(150)
        self.contribute_button.clicked.connect(self._actions.contribute.trigger)
        self._actions.contribute.changed.connect(self._sync_contribute)
        self.retry_button = QPushButton("Retry")
        self.retry_button.clicked.connect(self._retry)
        self.doctor_button = QPushButton("Run doctor…")
        self.doctor_button.clicked.connect(self._actions.doctor.trigger)
        for button in (self.contribute_button, self.retry_button, self.doctor_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        row.addLayout(buttons)
        return self.banner

    def _build_gates(self) -> QFrame:
        """One row per gate: icon, name, sentence (wrapped), reason code, time."""
        self.gates = QFrame()
        self.gates.setObjectName("gates")
        grid = QGridLayout(self.gates)
        grid.setContentsMargins(12, 10, 12, 10)
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(7)
        grid.setColumnStretch(COLUMN_SENTENCE + 1, 1)
        self._gate_rows: dict[str, tuple[QLabel, QLabel, QLabel, QLabel]] = {}
        for index, name in enumerate(GATE_ORDER):
            icon = QLabel()
            icon.setFixedSize(16, 16)
            title = QLabel(GATE_TITLES[name])
            title.setObjectName("gate-title")
            sentence = QLabel()
            sentence.setWordWrap(True)
            sentence.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            reason = QLabel()
            reason.setObjectName("reason")
            when = QLabel()
            when.setObjectName("caption")
            top = Qt.AlignmentFlag.AlignTop
            grid.addWidget(icon, index, 0, top)
            grid.addWidget(title, index, 1, top)
            grid.addWidget(sentence, index, 2, top)
            grid.addWidget(reason, index, 3, top)
            grid.addWidget(when, index, 4, top | Qt.AlignmentFlag.AlignRight)
            self._gate_rows[name] = (icon, sentence, reason, when)
        return self.gates

    def _build_toolbar(self) -> None:
        toolbar = QToolBar("MeshNet")
        toolbar.setMovable(False)
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        for action in self._actions.all():
            if action is None:
                toolbar.addSeparator()
            elif action is not self._actions.status:
                toolbar.addAction(action)
        self.addToolBar(toolbar)
        self.toolbar = toolbar

    # --- refreshing ------------------------------------------------------
    @guarded
    def refresh(self) -> None:
        status = self._controller.status
        title, sentence = headline(status)
        self.headline_label.setText(title)
        self.sentence_label.setText(sentence)
        look = tray_state(status.state)
        self.state_icon.setPixmap(tray_icon(look).pixmap(48, 48))
        self.banner.setProperty("look", look)
        self.banner.style().unpolish(self.banner)
        self.banner.style().polish(self.banner)
        failed = status.state in FAILED_STATES
        self.retry_button.setVisible(failed)
        self.doctor_button.setVisible(failed or status.state == "stopped")
        self._sync_contribute()
        # pause rules apply to a running node only
        self.rules_label.setText(self._pause_sentence if status.active else "")
        self.tokens_label.setText(format_count(status.tokens_served))
        self.sessions_label.setText(format_count(status.open_sessions))
        self._refresh_gates()
        self._tick()

    def _refresh_gates(self) -> None:
        status = self._controller.status
        now = time.time()
        for name, (icon, sentence, reason, when) in self._gate_rows.items():
            row = status.gates.get(name)
            if row is None:
                continue
            icon.setPixmap(gate_icon(row.gate_state).pixmap(16, 16))
            icon.setToolTip(GATE_STATE_WORDS.get(row.gate_state, row.gate_state))
            sentence.setText(gate_sentence(row, status, now))
            reason.setText(row.reason or "")
            reason.setToolTip("Reason code, for whoever helps you" if row.reason else "")
            when.setText(time.strftime("%H:%M:%S", time.localtime(row.at)) if row.at else "")

    @guarded
    def _tick(self) -> None:
        status = self._controller.status
        now = time.time()
        self.uptime_label.setText(
            format_duration(status.uptime(now)) if status.state == "serving" else "—"
        )
        capability = status.gates.get("capability")
        if capability is not None and capability.gate_state != "waiting":
            self._gate_rows["capability"][1].setText(gate_sentence(capability, status, now))

    @guarded
    def refresh_chart(self) -> None:
        if self._usage is None:
            return
        self.chart.set_hours(self._usage.hourly(time.time()))

    def _stats(self, _data: dict[str, Any]) -> None:
        if self.isVisible():  # a hidden window catches up on its next minute tick
            self.refresh_chart()

    def set_pause_rules_sentence(self, sentence: str) -> None:
        """The pause monitor's latest decision, shown under the tabs."""
        self._pause_sentence = sentence
        self.rules_label.setText(sentence if self._controller.status.active else "")

    def _sync_contribute(self) -> None:
        action = self._actions.contribute
        self.contribute_button.setEnabled(action.isEnabled())
        self.contribute_button.setText(
            "Stop contributing" if action.isChecked() else "Start contributing"
        )
        failed = self._controller.status.state in FAILED_STATES
        self.contribute_button.setVisible(not failed)  # Retry says the same there

    @guarded
    def _append_log(self, line: str) -> None:
        self.log_view.appendPlainText(line)

    @guarded
    def _retry(self) -> None:
        self._controller.retry()

    @guarded
    def copy_diagnostics(self) -> None:
        text = diagnostics_text(self._controller.status, self._versions)
        clipboard = QGuiApplication.clipboard()
        clipboard.setText(text)
        self.statusBar().showMessage("Diagnostics copied: paste them into your message.", 5000)

    def showEvent(self, event: QShowEvent) -> None:
        """A window opened late shows the truth: refresh everything as it appears."""
        super().showEvent(event)
        self.refresh()
        self.refresh_chart()

    # --- closing ---------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        """Closing hides the window; without a tray it is the app, so it quits (draining)."""
        if self._main_window:
            event.ignore()
            self.quit_requested.emit()
        else:
            event.ignore()
            self.hide()
