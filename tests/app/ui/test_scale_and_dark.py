"""Issues 22 and 37: every screen in German and Spanish at 100 % and 200 % scale (200 %
in a dark palette): no words cut off, no pale banner, and no fixed light background in
any style sheet of app/ui."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QColor, QImage

ROOT = Path(__file__).resolve().parents[3]

# what ``meshnet-app --screenshot DIR --language LANG`` runs, with a dark palette first
RENDER = """
import sys
from pathlib import Path
from typing import Any
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication
from app.ui.i18n import install_language
from app.ui.screenshots import render_all
app = QApplication([])
if sys.argv[3] == "dark":
    dark = QPalette()
    for role, colour in (("Window", "#202124"), ("WindowText", "#e8eaed"), ("Base", "#1b1b1d"),
                         ("AlternateBase", "#2a2b2e"), ("Text", "#e8eaed"), ("Button", "#303134"),
                         ("ButtonText", "#e8eaed"), ("PlaceholderText", "#9aa0a6")):
        dark.setColor(getattr(QPalette.ColorRole, role), QColor(colour))
    app.setPalette(dark)
install_language(app, sys.argv[2])
sys.exit(render_all(Path(sys.argv[1]), app))
"""


def render(folder: Path, language: str, scale: str, palette: str) -> list[dict[str, Any]]:
    """Every screen in ``language`` at ``scale``, in a child (the scale is per process)."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", QT_SCALE_FACTOR=scale, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", RENDER, str(folder), language, palette],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    screens: list[dict[str, Any]] = json.loads((folder / "texts.json").read_text("utf-8"))
    return screens


# Every screen in German and Spanish, at 100 % in a light palette and at 200 % in a
# dark one (issues 22 and 37): one child process each, as the scale is per process.
FITS = [(language, scale) for language in ("de", "es") for scale in ("1", "2")]


@pytest.mark.parametrize(("language", "scale"), FITS)
def test_every_screen_fits_its_words_in_german_and_spanish_at_100_and_200_percent(
    tmp_path: Path, language: str, scale: str
) -> None:
    palette = "dark" if scale == "2" else "light"
    screens = {s["screen"]: s for s in render(tmp_path, language, scale, palette)}
    assert len(screens) > 25
    clipped = {name: s["clipped"] for name, s in screens.items() if s["clipped"]}
    assert clipped == {}
    # the new views of issue 37 are there, so checked: cost and reward, Settings' simple
    # and Advanced pages, and the list rows of what the network serves
    week_title = {"de": "Die letzten 7 Tage", "es": "Los últimos 7 días"}[language]
    assert week_title in screens["status-serving"]["texts"]
    rows = [t for t in screens["serves-default"]["texts"] if t.startswith("SmolLM2-135M")]
    assert rows, screens["serves-default"]["texts"]
    assert {"settings-computer", "settings-pause", "settings-advanced"} <= set(screens)
    image = QImage(str(tmp_path / "status-serving.png"))
    # rendered at the scale asked for: the scale took effect
    assert image.width() >= int(scale) * 560, image.width()
    if palette == "dark":
        # the banner's inside (left of its buttons, under the words) follows the palette
        inside = image.pixelColor(image.width() // 3, 2 * 16 + 2 * 12 + 4)
        assert inside.lightness() < 90, inside.name()


def test_a_label_cut_short_is_reported_and_one_that_fits_is_not(qtbot: Any) -> None:
    from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

    from app.ui.visible_texts import clipped_texts

    root = QWidget()
    qtbot.addWidget(root)
    column = QVBoxLayout(root)
    cut, fits = QLabel("Pausieren, solange ein anderes Programm läuft"), QLabel("Ja")
    cut.setFixedWidth(40)
    column.addWidget(cut)
    column.addWidget(fits)
    root.show()
    assert clipped_texts(root) == ["Pausieren, solange ein anderes Programm läuft"]


def test_a_list_row_cut_short_is_reported_and_a_wrapped_one_is_not(qtbot: Any) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QListWidget, QVBoxLayout, QWidget

    from app.ui.visible_texts import clipped_texts, visible_texts

    root = QWidget()
    qtbot.addWidget(root)
    column = QVBoxLayout(root)
    row = "SmolLM2-360M-Instruct — Noch nicht bereit: Es braucht mehr Computer — 1 Computer hilft"
    cut, wrapped = QListWidget(), QListWidget()
    wrapped.setWordWrap(True)
    wrapped.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    for rows in (cut, wrapped):
        rows.addItem(row)
        rows.setFixedWidth(160)
        column.addWidget(rows)
    root.show()
    qtbot.waitExposed(root)
    assert clipped_texts(root) == [row]  # the first list only
    assert visible_texts(root).count(row) == 2  # and texts.json lists both rows


COLOUR = re.compile(r"#[0-9a-fA-F]{6}\b")
BACKGROUND = re.compile(r"background|\.fill\(", re.IGNORECASE)


def pale_backgrounds(source: str) -> list[str]:
    """Fixed light colours on lines that paint a background (a style sheet's
    ``background:``, ``setBackground``, a ``*_BACKGROUND`` constant, ``fill``):
    unreadable under a dark palette's light text."""
    return [
        colour
        for line in source.splitlines()
        if BACKGROUND.search(line)
        for colour in COLOUR.findall(line)
        if QColor(colour).lightness() > 200
    ]


def test_the_scan_finds_a_pale_background_and_spares_palette_roles() -> None:
    assert pale_backgrounds('"#banner { background: #e8f6ee; }"') == ["#e8f6ee"]
    assert pale_backgrounds('SERVED_BACKGROUND = QColor("#fff4c2")') == ["#fff4c2"]
    assert pale_backgrounds('pen = QPen(QColor("#ffffff"), 2.0)') == []  # a stroke
    assert pale_backgrounds('"#banner { background: palette(alternate-base); }"') == []
    assert pale_backgrounds('"border: 2px solid #2e9d5b;"') == []


def test_no_screen_draws_a_fixed_pale_background() -> None:
    found = {}
    for path in (ROOT / "app" / "ui").rglob("*.py"):
        if path.name == "screenshots.py":
            continue  # the tray-icon sheet imitates a light panel on purpose
        pale = pale_backgrounds(path.read_text("utf-8"))
        if pale:
            found[str(path.relative_to(ROOT))] = pale
    assert found == {}
