"""Label helpers the screens share."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel


def wrapping_label(text: str = "") -> QLabel:
    """A label that wraps long sentences and lets the user select (and copy) them."""
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label
