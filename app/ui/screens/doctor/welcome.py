"""The doctor wizard's first page: what the check does and how long it takes."""

from __future__ import annotations

from PySide6.QtWidgets import QVBoxLayout, QWizardPage

from app.texts import text
from app.ui.widgets.labels import wrapping_label


class WelcomePage(QWizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle(text("welcome.title"))
        layout = QVBoxLayout(self)
        layout.addWidget(wrapping_label(text("welcome.one")))
        layout.addWidget(wrapping_label(text("welcome.two")))
        layout.addStretch(1)
