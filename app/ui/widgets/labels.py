"""Label helpers the screens share."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout


def wrapping_label(text: str = "") -> QLabel:
    """A label that wraps long sentences and lets the user select (and copy) them."""
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def stat_box(caption_text: str) -> tuple[QFrame, QLabel]:
    """A framed figure (large, bold) over its caption; returns (frame, figure label).

    The frame is named ``stat`` so the status window's style sheet draws its border.
    """
    frame = QFrame()
    frame.setObjectName("stat")
    layout = QVBoxLayout(frame)
    layout.setContentsMargins(12, 8, 12, 8)
    value = QLabel("—")
    font = QFont(value.font())
    font.setPointSizeF(font.pointSizeF() * 1.5)
    font.setBold(True)
    value.setFont(font)
    caption = QLabel(caption_text)
    caption.setObjectName("caption")
    caption.setWordWrap(True)
    value.setAccessibleName(caption_text)
    layout.addWidget(value)
    layout.addWidget(caption)
    layout.addStretch(1)  # values line up when a caption wraps
    return frame, value
