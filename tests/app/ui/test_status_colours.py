"""Status colours come from the palette: the error and OK words pass WCAG AA (4.5:1)
on a light and on a dark window (the fixed #b3261e was about 1.3:1 on a dark one)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtGui import QColor

from app.ui.widgets.settings_fields import (
    AA_CONTRAST,
    ERROR_SHADES,
    OK_SHADES,
    contrast,
    status_colour,
)


@pytest.mark.parametrize("window", ["#efefef", "#ffffff", "#2b2b2b", "#1e1e1e", "#353535"])
@pytest.mark.parametrize("shades", [ERROR_SHADES, OK_SHADES])
def test_status_words_are_readable_on_light_and_dark_windows(
    window: str, shades: tuple[str, str]
) -> None:
    background = QColor(window)
    assert contrast(status_colour(shades, background), background) >= AA_CONTRAST


def test_the_rendered_problem_label_follows_the_palette(qtbot: Any) -> None:
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QApplication

    from app.ui.widgets.settings_fields import error_style

    qapp = QApplication.instance()
    assert isinstance(qapp, QApplication)
    before = qapp.palette()
    dark = QPalette(before)
    dark.setColor(QPalette.ColorRole.Window, QColor("#202020"))
    qapp.setPalette(dark)
    try:
        assert error_style() == f"color: {ERROR_SHADES[1]};"
    finally:
        qapp.setPalette(before)
    light = QColor(qapp.palette().color(QPalette.ColorRole.Window))
    assert contrast(QColor(error_style()[7:-1]), light) >= AA_CONTRAST
