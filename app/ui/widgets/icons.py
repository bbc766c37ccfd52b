"""The app's icons: the app icon and one tray icon per state, from ``assets/icons``.

The PNGs (rendered from the SVG sources by ``assets/icons/render.py``) are
loaded at every size so the platform picks a sharp one for its taskbar; the
SVG is the fallback. State is told by colour and by shape (a hollow ring,
a turning arrow, a check mark, pause bars, a warning triangle) so users who
cannot tell the colours apart can still read the tray.
"""

from __future__ import annotations

import logging
import sys
from functools import cache
from pathlib import Path

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPainterPath, QPen, QPixmap

log = logging.getLogger(__name__)

SIZES = (16, 24, 32, 48, 64, 128, 256)
TRAY_STATES = ("off", "starting", "serving", "paused", "error")


def icons_dir() -> Path:
    """``assets/icons`` beside the source tree, or inside a frozen bundle."""
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        return Path(bundle) / "assets" / "icons"
    return Path(__file__).resolve().parents[3] / "assets" / "icons"


def _load(name: str) -> QIcon:
    folder = icons_dir()
    icon = QIcon()
    for size in SIZES:
        png = folder / "png" / f"{name}-{size}.png"
        if png.is_file():
            icon.addFile(str(png))
    if icon.isNull():
        svg = folder / f"{name}.svg"
        if svg.is_file():
            icon = QIcon(str(svg))
        else:
            log.warning("icon %s not found under %s", name, folder)
    return icon


@cache
def app_icon() -> QIcon:
    return _load("app")


@cache
def tray_icon(state: str) -> QIcon:
    """The tray icon for ``state`` (one of TRAY_STATES; anything else shows "off")."""
    return _load(f"tray-{state if state in TRAY_STATES else 'off'}")


# gate state -> (colour, glyph): the same shapes as the tray badges
GATE_LOOKS: dict[str, tuple[str, str]] = {
    "passed": ("#1f9d55", "check"),
    "failed": ("#d43c3c", "cross"),
    "pending": ("#2f6fde", "dots"),
    "info": ("#5f6b7a", "info"),
    "waiting": ("#9aa1ab", "ring"),
}


def _paint_gate(painter: QPainter, size: int, colour: str, glyph: str) -> None:
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    unit = size / 16.0
    bounds = QRectF(1 * unit, 1 * unit, 14 * unit, 14 * unit)
    if glyph == "ring":
        painter.setPen(QPen(QColor(colour), 1.8 * unit))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawEllipse(bounds.adjusted(unit, unit, -unit, -unit))
        return
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(colour))
    painter.drawEllipse(bounds)
    pen = QPen(QColor("#ffffff"), 2.0 * unit)
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    painter.setPen(pen)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    if glyph == "check":
        path = QPainterPath(QPointF(4.5 * unit, 8.2 * unit))
        path.lineTo(7 * unit, 10.7 * unit)
        path.lineTo(11.5 * unit, 5.5 * unit)
        painter.drawPath(path)
    elif glyph == "cross":
        painter.drawLine(QPointF(5.5 * unit, 5.5 * unit), QPointF(10.5 * unit, 10.5 * unit))
        painter.drawLine(QPointF(10.5 * unit, 5.5 * unit), QPointF(5.5 * unit, 10.5 * unit))
    elif glyph == "dots":
        dots = QPen(QColor("#ffffff"), 2.4 * unit)
        dots.setCapStyle(Qt.PenCapStyle.RoundCap)
        painter.setPen(dots)
        for x in (5.0, 8.0, 11.0):
            painter.drawPoint(QPointF(x * unit, 8 * unit))
    elif glyph == "info":
        painter.drawLine(QPointF(8 * unit, 7.5 * unit), QPointF(8 * unit, 11 * unit))
        painter.drawPoint(QPointF(8 * unit, 4.8 * unit))


@cache
def gate_icon(gate_state: str) -> QIcon:
    """A small round status icon for a gate row, drawn (no file): colour and glyph."""
    colour, glyph = GATE_LOOKS.get(gate_state, GATE_LOOKS["waiting"])
    icon = QIcon()
    for size in (16, 32):
        pixmap = QPixmap(size, size)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        _paint_gate(painter, size, colour, glyph)
        painter.end()
        icon.addPixmap(pixmap)
    return icon
