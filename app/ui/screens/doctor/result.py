"""The doctor wizard's last page: the test's verdict and what to do next, with the
optional leaderboard name and team below a passed test (the wizard saves them)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QPushButton,
    QVBoxLayout,
    QWidget,
    QWizardPage,
)

from app.texts import number, text
from app.ui.screens.doctor.state import Controller, WizardState
from app.ui.widgets.labels import wrapping_label
from app.ui.widgets.leaderboard_fields import LeaderboardFields


class ResultPage(QWizardPage):
    """Passed: offer to start contributing. Not passed: what to do, the node's reasons
    one click away (Show details), and a way back to the memory choice."""

    # "Choose how much memory to use": the wizard goes back to its memory page
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
        self.contribute = QCheckBox(text("result.start"))
        self.contribute.setAccessibleName(text("result.start").replace("&", ""))
        self.leaderboard = LeaderboardFields()
        self.leaderboard_room = QWidget()  # some room above the box, gone with it
        room = QVBoxLayout(self.leaderboard_room)
        room.setContentsMargins(0, 8, 0, 0)
        room.addWidget(self.leaderboard)
        self.other_layers = QPushButton(text("result.back"))
        self.other_layers.setAccessibleName(text("result.back").replace("&", ""))
        self.other_layers.clicked.connect(self._choose_other_layers)
        # the node's own reasons (they name layers and memory sizes): one click away
        self.show_why = QPushButton(text("result.details"))
        self.show_why.setCheckable(True)
        self.show_why.toggled.connect(self._toggle_why)
        self.why = wrapping_label()
        self.why.setObjectName("resultDetails")
        layout.addWidget(self.headline)
        layout.addWidget(self.details)
        layout.addWidget(self.advice)
        layout.addWidget(self.contribute)
        layout.addWidget(self.leaderboard_room)
        row = QHBoxLayout()
        row.addWidget(self.other_layers)
        row.addWidget(self.show_why)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addWidget(self.why)
        layout.addStretch(1)

    @property
    def passed(self) -> bool:
        return bool(self.state.report) and (self.state.report or {}).get("status") == "passed"

    def initializePage(self) -> None:
        self.setTitle(text("result.title"))
        report = self.state.report or {}
        shard = report.get("shard") or {}
        start, end = shard.get("start"), shard.get("end")
        if (start, end) == (None, None) and self.state.layers:
            start, end = self.state.layers
        self.show_why.setChecked(False)
        self._toggle_why(False)
        if self.passed:
            speed = report.get("tokens_per_second")
            self.headline.setText(text("result.passed"))
            self.details.setText(
                text("result.speed", speed=number(round(speed)))
                if isinstance(speed, int | float)
                else text("result.speed.none")
            )
            running = self.controller.running
            self.advice.setText(text("result.running" if running else "result.finish"))
            self.contribute.setVisible(not running)
            self.contribute.setChecked(not running)
            self.leaderboard_room.setVisible(True)
            self.other_layers.setVisible(False)
            self.show_why.setVisible(False)
            return
        self.headline.setText(text("result.failed"))
        sentences = list(report.get("diagnostics") or [])
        if self.state.error:
            sentences.append(self.state.error)
        if not sentences:
            sentences.append(text("result.failed.why"))
        self.details.setText("")
        self.details.setVisible(False)
        self.why.setText("\n".join(f"• {sentence}" for sentence in sentences))
        self.advice.setText(text("result.failed.advice"))
        self.contribute.setVisible(False)
        self.contribute.setChecked(False)
        self.leaderboard_room.setVisible(False)
        self.other_layers.setVisible(True)
        self.show_why.setVisible(True)

    def _toggle_why(self, shown: bool) -> None:
        self.why.setVisible(shown)
        self.show_why.setText(text("result.details.hide" if shown else "result.details"))
        if self.passed:
            self.details.setVisible(True)

    def _choose_other_layers(self) -> None:
        self.other_layers_requested.emit()
