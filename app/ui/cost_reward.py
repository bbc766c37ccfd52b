"""The status window's cost and reward, in one glance (issue 37).

Left: what this PC gives right now (the node's graphics memory and the card's
load, or its memory and processor share; ``app.machine_use``) and what it earns
(the credit in a sentence, and what credit buys; ``app.credit_summary``).
Right: the last 7 days in words, one row per day: its name, a bar, and
"1,234 words in 3 hours" (``app.week_summary``). Real widgets, so a screen
reader reads every row; the hour-by-hour chart stays in Details.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from PySide6.QtCore import QDateTime, QLocale, QTimer
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.credit_summary import CreditSummary, earned_sentence
from app.machine_use import MachineUse, use_sentence
from app.texts import language, text
from app.ui.tasks import run_in_background
from app.week_summary import DAYS, Day, day_sentence, last_week, midnight, week_sentence

log = logging.getLogger(__name__)

USE_REFRESH_MS = 5_000
ReadUse = Callable[[int | None], MachineUse | None]


def _section_title(words: str) -> QLabel:
    label = QLabel(words)
    label.setObjectName("section")
    return label


def _sentence() -> QLabel:
    label = QLabel()
    label.setWordWrap(True)
    label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
    return label


def day_name(day: Day, now: float) -> str:
    """ "Today", else the weekday in the chosen language ("Montag")."""
    if day.start == midnight(now):
        return text("week.today")
    moment = QDateTime.fromSecsSinceEpoch(int(day.start) + 12 * 3600)
    name = QLocale(language()).toString(moment, "dddd")
    return name[:1].upper() + name[1:]  # a row starts with a capital, as "Today" does


class CostReward(QWidget):
    """Two columns: the cost and the reward on the left, the week on the right."""

    def __init__(
        self,
        *,
        active: Callable[[], bool],
        node_pid: Callable[[], int | None],
        read_use: ReadUse | None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._active = active
        self._node_pid = node_pid
        self._read_use = read_use
        self._use: MachineUse | None = None
        self._reading = False
        self._credit: CreditSummary | None = None
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(24)
        row.addLayout(self._build_left(), 1)
        row.addLayout(self._build_week(), 1)
        self._timer = QTimer(self)
        self._timer.setInterval(USE_REFRESH_MS)
        self._timer.timeout.connect(self.read_use)
        self._timer.start()
        self.refresh_use()
        self.set_credit(None)

    def _build_left(self) -> QVBoxLayout:
        column = QVBoxLayout()
        column.setSpacing(4)
        column.addWidget(_section_title(text("use.title")))
        self.use_label = _sentence()
        self.use_label.setToolTip(text("use.tip"))
        self.use_label.setAccessibleName(text("use.title"))
        column.addWidget(self.use_label)
        column.addSpacing(8)
        column.addWidget(_section_title(text("earn.title")))
        self.earn_label = _sentence()
        self.earn_label.setAccessibleName(text("earn.title"))
        column.addWidget(self.earn_label)
        column.addStretch(1)
        return column

    def _build_week(self) -> QVBoxLayout:
        column = QVBoxLayout()
        column.setSpacing(4)
        column.addWidget(_section_title(text("week.title")))
        grid = QGridLayout()
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(2)
        grid.setColumnStretch(1, 1)
        self.day_rows: list[tuple[QLabel, QProgressBar, QLabel]] = []
        for index in range(DAYS):
            name, words = QLabel(), QLabel()
            bar = QProgressBar()
            bar.setTextVisible(False)
            bar.setRange(0, 100)
            bar.setMaximumHeight(name.sizeHint().height() // 2 + 2)
            bar.setMinimumWidth(40)
            grid.addWidget(name, index, 0)
            grid.addWidget(bar, index, 1)
            grid.addWidget(words, index, 2)
            self.day_rows.append((name, bar, words))
        column.addLayout(grid)
        self.week_label = QLabel()
        self.week_label.setObjectName("caption")
        self.week_label.setWordWrap(True)
        column.addWidget(self.week_label)
        column.addStretch(1)
        return column

    # --- the cost ---------------------------------------------------------
    def read_use(self) -> None:
        """Measure again, off the GUI thread; only while contributing and shown."""
        if self._read_use is None or self._reading or not self.isVisible():
            return
        if not self._active():
            self.set_use(None)
            return
        read, pid = self._read_use, self._node_pid()
        self._reading = True
        run_in_background(
            lambda: read(pid),
            on_success=self._got_use,
            on_failure=lambda _exc: self._got_use(None),
            parent=self,
        )

    def _got_use(self, use: MachineUse | None) -> None:
        self._reading = False
        self.set_use(use)

    def set_use(self, use: MachineUse | None) -> None:
        self._use = use
        self.refresh_use()

    def refresh_use(self) -> None:
        self.use_label.setText(use_sentence(self._use, self._active()))

    # --- the reward -------------------------------------------------------
    def set_credit(self, summary: CreditSummary | None) -> None:
        self._credit = summary
        self.earn_label.setText(earned_sentence(summary))

    def set_hours(self, hours: Sequence[tuple[float, int]], now: float) -> None:
        """The week's rows from the usage history's 168 hour buckets."""
        days = last_week(hours, now)
        most = max((day.words for day in days), default=0)
        for day, (name, bar, words) in zip(days, self.day_rows, strict=True):
            name.setText(day_name(day, now))
            sentence = day_sentence(day)
            words.setText(sentence)
            bar.setValue(round(100 * day.words / most) if most else 0)
            bar.setAccessibleName(f"{name.text()}: {sentence}")
        self.week_label.setText(week_sentence(days))
