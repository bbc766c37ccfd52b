"""The doctor wizard's last page: the test's verdict and what to do next."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QPushButton, QVBoxLayout, QWizardPage

from app.ui.screens.doctor.state import Controller, WizardState
from app.ui.widgets.labels import wrapping_label


class ResultPage(QWizardPage):
    """Passed: offer to start contributing. Not passed: why, and a way back to the layers."""

    # "Choose other layers": the wizard goes back to its layers page
    other_layers_requested = Signal()

    def __init__(self, state: WizardState, controller: Controller) -> None:
        super().__init__()
        self.state = state
        self.controller = controller
        self.setFinalPage(True)
        layout = QVBoxLayout(self)
        self.headline = wrapping_label()
        font = self.headline.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.headline.setFont(font)
        self.details = wrapping_label()
        self.advice = wrapping_label()
        self.contribute = QCheckBox("Start contributing now")
        self.other_layers = QPushButton("Choose other layers")
        self.other_layers.clicked.connect(self._choose_other_layers)
        layout.addWidget(self.headline)
        layout.addWidget(self.details)
        layout.addWidget(self.advice)
        layout.addWidget(self.contribute)
        row = QHBoxLayout()
        row.addWidget(self.other_layers)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addStretch(1)

    @property
    def passed(self) -> bool:
        return bool(self.state.report) and (self.state.report or {}).get("status") == "passed"

    def initializePage(self) -> None:
        self.setTitle("Test result")
        report = self.state.report or {}
        shard = report.get("shard") or {}
        start, end = shard.get("start"), shard.get("end")
        if (start, end) == (None, None) and self.state.layers:
            start, end = self.state.layers
        if self.passed:
            speed = report.get("tokens_per_second")
            speed_text = (
                f" at {speed:.1f} tokens per second" if isinstance(speed, int | float) else ""
            )
            self.headline.setText("Passed: this computer is ready to contribute.")
            self.details.setText(f"It ran layers {start} up to {end}{speed_text}.")
            running = self.controller.running
            self.advice.setText(
                "Contribute is already on; it uses these layers the next time it starts."
                if running
                else "Finish saves these layers and, with the box ticked, starts contributing."
            )
            self.contribute.setVisible(not running)
            self.contribute.setChecked(not running)
            self.other_layers.setVisible(False)
            return
        self.headline.setText("The test did not pass.")
        sentences = list(report.get("diagnostics") or [])
        if self.state.error:
            sentences.append(self.state.error)
        if not sentences:
            sentences.append("The test stopped without saying why.")
        self.details.setText("\n".join(f"• {sentence}" for sentence in sentences))
        self.advice.setText(
            "What to do: choose fewer layers or raise the memory limit, then test again. "
            "Nothing was changed; Contribute stays as it was."
        )
        self.contribute.setVisible(False)
        self.contribute.setChecked(False)
        self.other_layers.setVisible(True)

    def _choose_other_layers(self) -> None:
        self.other_layers_requested.emit()
