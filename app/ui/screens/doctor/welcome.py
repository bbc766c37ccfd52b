"""The doctor wizard's first page: what the check does and how long it takes."""

from __future__ import annotations

from PySide6.QtWidgets import QVBoxLayout, QWizardPage

from app.ui.widgets.labels import wrapping_label


class WelcomePage(QWizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle("Check this computer")
        layout = QVBoxLayout(self)
        layout.addWidget(
            wrapping_label(
                "MeshNet lets this computer run part of a large language model for others "
                "while you are not using it."
            )
        )
        layout.addWidget(
            wrapping_label(
                "This check looks at your hardware, suggests how much of the model this "
                "computer can hold, gets the model if it is not here yet, and runs a real "
                "test. It takes a few minutes and you can stop it at any time."
            )
        )
        layout.addStretch(1)
