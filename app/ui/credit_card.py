"""The status window's credit card: today, this week, in all, and rank.

It asks the tracker every CREDIT_REFRESH_MS (off the GUI thread, through
``app.ui.tasks``) once the node has registered: ``registration`` returns the
registration gate's data (``node_id``, ``tracker_url``) or None before it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QWidget

from app.credit_summary import CreditSummary, fetch_credit
from app.ui.tasks import run_in_background

CREDIT_REFRESH_MS = 60_000


class CreditCard(QFrame):
    def __init__(
        self,
        registration: Callable[[], Mapping[str, Any] | None],
        parent: QWidget | None = None,
        *,
        fetch: Callable[[str, str], CreditSummary] = fetch_credit,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("stat")
        self._registration = registration
        self._fetch = fetch
        row = QHBoxLayout(self)
        row.setContentsMargins(12, 8, 12, 8)
        self.label = QLabel("Credit: shown once this computer has registered with the network.")
        self.label.setWordWrap(True)
        self.label.setAccessibleName("Credit earned")
        row.addWidget(self.label)
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
        if summary.forfeited:
            self.label.setText(f"Credit forfeited: {summary.forfeited}")
        else:
            self.label.setText(
                f"Credit — today {summary.today:.2f} · this week {summary.week:.2f} · "
                f"in all {summary.total:.2f} · rank #{summary.rank or '-'}"
            )
        self.setToolTip(summary.one_line())
