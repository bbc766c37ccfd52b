"""The status window's credit section: today, this week, in all, and rank.

It asks the tracker every CREDIT_REFRESH_MS (off the GUI thread, through
``app.ui.tasks``) once the node has registered: ``registration`` returns the
registration gate's data (``node_id``, ``tracker_url``) or None before it.
Each answer is emitted as ``summary_changed`` (the tray's tooltip line).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.credit_summary import CreditSummary, credit_figure, fetch_credit, rank_figure
from app.texts import text
from app.ui.tasks import run_in_background
from app.ui.widgets.labels import stat_box

CREDIT_REFRESH_MS = 60_000
FetchCredit = Callable[[str, str], CreditSummary]


class CreditCard(QWidget):
    summary_changed = Signal(object)  # CreditSummary

    def __init__(
        self,
        registration: Callable[[], Mapping[str, Any] | None],
        parent: QWidget | None = None,
        *,
        fetch: FetchCredit = fetch_credit,
    ) -> None:
        super().__init__(parent)
        self._registration = registration
        self._fetch = fetch
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        title = QLabel(text("credit.title"))
        title.setObjectName("section")
        column.addWidget(title)
        row = QHBoxLayout()
        row.setSpacing(10)
        self.figures: dict[str, QLabel] = {}
        for key in ("today", "week", "total", "rank"):
            frame, self.figures[key] = stat_box(text(f"credit.{key}"))
            frame.setToolTip(text("credit.tip"))
            row.addWidget(frame)
        column.addLayout(row)
        self.label = QLabel(text("credit.waiting"))
        self.label.setObjectName("caption")
        self.label.setWordWrap(True)
        self.label.setAccessibleName(text("credit.title"))
        column.addWidget(self.label)
        self.summary: CreditSummary | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(CREDIT_REFRESH_MS)
        self._timer.timeout.connect(self.refresh)
        self._timer.start()
        QTimer.singleShot(0, self.refresh)

    def refresh(self) -> None:
        found = self._registration() or {}
        tracker_url, node_id = found.get("tracker_url"), found.get("node_id")
        if not isinstance(tracker_url, str) or not isinstance(node_id, str):
            return
        fetch = self._fetch
        run_in_background(
            lambda: fetch(tracker_url, node_id),
            on_success=self.set_summary,
            on_failure=lambda _exc: None,  # keep the last figures; the next tick retries
            parent=self,
        )

    def set_summary(self, summary: CreditSummary) -> None:
        self.summary = summary
        forfeited = bool(summary.forfeited)
        values = {
            "today": credit_figure(summary.today),
            "week": credit_figure(summary.week),
            "total": credit_figure(summary.total),
            "rank": rank_figure(summary.rank),
        }
        for key, label in self.figures.items():
            label.setText("—" if forfeited else values[key])
        note = text("credit.forfeited") if forfeited else summary.listed_as()
        self.label.setText(note)
        self.label.setVisible(bool(note))
        self.setToolTip(summary.one_line())
        self.summary_changed.emit(summary)
