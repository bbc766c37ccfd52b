"""A small bar chart of tokens served per hour over the last week (QPainter).

The data comes from ``app.usage_history.UsageHistory.hourly(now)``: 168
(hour start, tokens) pairs, oldest first. Drawing it by hand keeps the app
free of a charting dependency and the picture readable at a glance: one bar
per hour, a label per day, the week's total in words.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from PySide6.QtCore import QDateTime, QLocale, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from app.status_model import format_count
from app.texts import language, text

BAR_COLOUR = QColor("#1f9d55")
NOW_COLOUR = QColor("#2f6fde")


def _nice_ceiling(value: int) -> int:
    """The axis top: 1, 2 or 5 times a power of ten, at least ``value``."""
    if value <= 0:
        return 10
    magnitude = 1
    while magnitude * 10 <= value:
        magnitude *= 10
    for step in (1, 2, 5, 10):
        if step * magnitude >= value:
            return step * magnitude
    return 10 * magnitude


def _local_time(at: float, pattern: str) -> str:
    """``at`` in local time, with the chosen language's day names."""
    return QLocale(language()).toString(QDateTime.fromSecsSinceEpoch(int(at)), pattern)


class UsageChart(QWidget):
    """Tokens served per hour; ``set_hours`` replaces the data and repaints."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._hours: list[tuple[float, int]] = []
        self.setMinimumHeight(150)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setAccessibleName(text("details.chart.name"))

    def sizeHint(self) -> QSize:
        return QSize(560, 180)

    @property
    def total(self) -> int:
        return sum(tokens for _, tokens in self._hours)

    def set_hours(self, hours: Sequence[tuple[float, int]]) -> None:
        self._hours = [(float(at), max(0, int(tokens))) for at, tokens in hours]
        self.setToolTip(self.summary())
        self.update()

    def summary(self) -> str:
        if not self.total:
            return text("details.chart.nothing")
        best = max(self._hours, key=lambda pair: pair[1])
        when = _local_time(best[0], "ddd HH:00")
        return text(
            "details.chart.summary",
            total=format_count(self.total),
            when=when,
            best=format_count(best[1]),
        )

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        try:
            self._paint(painter)
        finally:
            painter.end()

    def _paint(self, painter: QPainter) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        ink = palette.color(QPalette.ColorRole.WindowText)
        faint = QColor(ink)
        faint.setAlpha(70)
        small = QFont(self.font())
        small.setPointSizeF(max(7.0, small.pointSizeF() * 0.85))
        painter.setFont(small)
        metrics = painter.fontMetrics()
        line = metrics.height()
        left = metrics.horizontalAdvance("00,000") + 10
        area = QRectF(left, line + 6, self.width() - left - 8, self.height() - 2 * line - 14)
        painter.setPen(ink)
        if not self.total:
            painter.drawText(
                QRectF(0, 0, self.width(), self.height()),
                int(Qt.AlignmentFlag.AlignCenter),
                text("details.chart.nothing") + "\n" + text("details.chart.fills"),
            )
            return
        painter.drawText(QRectF(0, 0, self.width(), line), self.summary())
        if area.width() <= 0 or area.height() <= 0:
            return
        top = _nice_ceiling(max((tokens for _, tokens in self._hours), default=0))
        painter.setPen(QPen(faint, 1))
        for fraction in (0.0, 0.5, 1.0):
            y = area.bottom() - fraction * area.height()
            painter.drawLine(int(area.left()), int(y), int(area.right()), int(y))
            painter.setPen(ink)
            label = format_count(int(top * fraction))
            painter.drawText(
                QRectF(0, y - line / 2, left - 6, line),
                int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
                label,
            )
            painter.setPen(QPen(faint, 1))
        if not self._hours:
            return
        width = area.width() / len(self._hours)
        for index, (at, tokens) in enumerate(self._hours):
            x = area.left() + index * width
            local = time.localtime(at)
            if local.tm_hour == 0:
                painter.setPen(QPen(faint, 1))
                painter.drawLine(int(x), int(area.top()), int(x), int(area.bottom()))
                painter.setPen(ink)
                painter.drawText(QRectF(x + 2, area.bottom() + 2, 60, line), _local_time(at, "ddd"))
            if tokens:
                height = max(1.0, area.height() * tokens / top)
                colour = NOW_COLOUR if index == len(self._hours) - 1 else BAR_COLOUR
                painter.fillRect(
                    QRectF(x, area.bottom() - height, max(1.0, width - 0.5), height), colour
                )
