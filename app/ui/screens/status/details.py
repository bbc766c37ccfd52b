"""The Status window's Details view: the engineer's words, one click from the main view.

Every step (gate) with its sentence, reason code and time, the served tokens and
open sessions, the usage chart, the node's log, where the key lives without a
keyring, what became of the leaderboard name, and Copy diagnostics. It reads the
node's status through the callable it is given and owns none of the window's
state; the window wires Back and Copy diagnostics to its own slots.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextOption
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.status_model import GATE_ORDER, NodeStatus, format_count, gate_sentence, gate_title
from app.texts import text
from app.ui.widgets.icons import gate_icon
from app.ui.widgets.labels import stat_box
from app.ui.widgets.usage_chart import UsageChart

log = logging.getLogger(__name__)

COLUMN_SENTENCE = 1
GATE_STATES = ("passed", "failed", "pending", "info", "waiting")


def key_place_sentence() -> str:
    """One plain sentence where the app keeps the key in a file; "" where a keyring has it."""
    from core.identity.keystore import fallback_identity_file, keyring_problem

    try:
        path = fallback_identity_file()
        if path is None:
            return ""
        if keyring_problem() is not None:
            return text("details.key-file.no-keyring", folder=path.parent.parent)
        return text("details.key-file", path=path)
    except Exception:  # a sentence in Details must never break the window
        log.exception("cannot tell where the key is kept")
        return ""


class DetailsView(QWidget):
    """The engineer's view: every step with its reason code, chart, log, diagnostics."""

    def __init__(
        self,
        status: Callable[[], NodeStatus],
        *,
        key_place: Callable[[], str] = key_place_sentence,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._status = status
        self._key_place = key_place
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 16, 16, 12)
        layout.setSpacing(12)
        top = QHBoxLayout()
        self.back_button = QPushButton(text("details.back"))
        self.back_button.setAccessibleName(text("details.back.name"))
        gates_title = QLabel(text("details.title"))
        gates_title.setObjectName("section")
        top.addWidget(self.back_button)
        top.addWidget(gates_title, 1)
        layout.addLayout(top)
        self.details_state = QLabel()
        self.details_state.setWordWrap(True)
        self.details_state.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.details_state)
        # where the key lives when no keyring does (core.identity.keystore.fallback_identity_file)
        self.key_file_label = QLabel()
        self.key_file_label.setWordWrap(True)
        self.key_file_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.key_file_label.setVisible(False)
        layout.addWidget(self.key_file_label)
        self.credit_link_label = QLabel()  # the leaderboard name's fate (app.ui.credit_linker)
        self.credit_link_label.setWordWrap(True)
        self.credit_link_label.setVisible(False)
        layout.addWidget(self.credit_link_label)
        layout.addWidget(self._build_gates())
        stats = QHBoxLayout()
        stats.setSpacing(10)
        tokens_frame, self.tokens_label = stat_box(text("details.tokens"))
        sessions_frame, self.sessions_label = stat_box(text("details.sessions"))
        for frame in (tokens_frame, sessions_frame):
            stats.addWidget(frame)
        layout.addLayout(stats)
        self.tabs = QTabWidget()
        self.chart = UsageChart()
        self.tabs.addTab(self.chart, text("details.chart"))
        self.log_view = QPlainTextEdit()
        self.log_view.setReadOnly(True)
        self.log_view.setMaximumBlockCount(500)
        # a traceback wraps: nobody scrolls sideways to read why it stopped
        self.log_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.log_view.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.log_view.setPlaceholderText(text("details.log.empty"))
        self.log_view.setAccessibleName(text("details.log"))
        self.tabs.addTab(self.log_view, text("details.log"))
        layout.addWidget(self.tabs, 2)
        bottom = QHBoxLayout()
        bottom.addStretch(1)
        self.copy_button = QPushButton(text("details.copy"))
        self.copy_button.setAccessibleName(text("details.copy"))
        self.copy_button.setToolTip(text("details.copy.tip"))
        bottom.addWidget(self.copy_button)
        layout.addLayout(bottom)

    def _build_gates(self) -> QFrame:
        """One row per gate: icon, name, sentence (wrapped), reason code, time."""
        self.gates = QFrame()
        self.gates.setObjectName("gates")
        grid = QGridLayout(self.gates)
        grid.setContentsMargins(12, 10, 12, 10)
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(7)
        grid.setColumnStretch(COLUMN_SENTENCE + 1, 1)
        self.gate_rows: dict[str, tuple[QLabel, QLabel, QLabel, QLabel]] = {}
        for index, name in enumerate(GATE_ORDER):
            icon = QLabel()
            icon.setFixedSize(16, 16)
            title = QLabel(gate_title(name))
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
            self.gate_rows[name] = (icon, sentence, reason, when)
        return self.gates

    def extra_height(self) -> int:
        """Room the window grows by for the key's and the leaderboard's sentences."""
        extra = self.credit_link_label.sizeHint().height() + 12 if self._link_shown() else 0
        if self.key_file_label.text():
            extra += self.key_file_label.sizeHint().height() + 12
        return extra

    def _link_shown(self) -> bool:
        return bool(self.credit_link_label.text())

    def refresh(self) -> None:
        """The numbers, the state line and every gate row from the status now."""
        status = self._status()
        self.tokens_label.setText(format_count(status.tokens_served))
        self.sessions_label.setText(format_count(status.open_sessions))
        self.details_state.setText(
            f"{status.state}: {status.message}" + (f" [{status.reason}]" if status.reason else "")
        )
        self._refresh_gates()

    def _refresh_gates(self) -> None:
        status = self._status()
        now = time.time()
        for name, (icon, sentence, reason, when) in self.gate_rows.items():
            row = status.gates.get(name)
            if row is None:
                continue
            icon.setPixmap(gate_icon(row.gate_state).pixmap(16, 16))
            known = row.gate_state in GATE_STATES
            words = text(f"gate-state.{row.gate_state}") if known else row.gate_state
            icon.setToolTip(words)
            icon.setAccessibleName(f"{gate_title(name)}: {words}")
            sentence.setText(gate_sentence(row, status, now))
            reason.setText(row.reason or "")
            reason.setToolTip(text("details.reason.tip") if row.reason else "")
            when.setText(time.strftime("%H:%M:%S", time.localtime(row.at)) if row.at else "")

    def tick(self, now: float) -> None:
        """The capability report's age and time left move with the clock."""
        status = self._status()
        capability = status.gates.get("capability")
        if capability is not None and capability.gate_state != "waiting":
            self.gate_rows["capability"][1].setText(gate_sentence(capability, status, now))

    def refresh_key_place(self) -> None:
        """Say where the node's key lives when it is not in a keyring."""
        sentence = self._key_place()
        self.key_file_label.setText(sentence)
        self.key_file_label.setVisible(bool(sentence))

    def set_credit_link_sentence(self, sentence: str) -> None:
        """What became of the leaderboard name and team."""
        self.credit_link_label.setText(sentence)
        self.credit_link_label.setVisible(bool(sentence))
