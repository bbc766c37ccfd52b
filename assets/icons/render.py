"""Render the icon SVG sources to the PNG sizes the app and installers use.

Run after editing an SVG (``QT_QPA_PLATFORM=offscreen python assets/icons/render.py``)
and commit the PNGs: tray icons must not depend on an SVG image plugin being
present on the user's machine, and small sizes are what taskbars ask for.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

SIZES = (16, 24, 32, 48, 64, 128, 256)
NAMES = ("app", "tray-off", "tray-starting", "tray-serving", "tray-paused", "tray-error")
HERE = Path(__file__).resolve().parent

log = logging.getLogger("render-icons")


def render(svg: Path, size: int, target: Path) -> None:
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"{svg} is not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    if not image.save(str(target)):
        raise SystemExit(f"could not write {target}")


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    out = HERE / "png"
    out.mkdir(exist_ok=True)
    for name in NAMES:
        for size in SIZES:
            render(HERE / f"{name}.svg", size, out / f"{name}-{size}.png")
        log.info("rendered %s", name)
    del app
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
