"""The doctor wizard's layers page: the range to test and the memory limit.

The range starts from this computer's suggestion; with a tracker set, the
tracker is asked in the background which range the network needs most.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QSpinBox, QVBoxLayout, QWizardPage

from app.settings_model import MIN_MEMORY_CAP_MB
from app.tracker_api import TrackerAllocation, fetch_allocation
from app.ui.screens.doctor.state import WizardState
from app.ui.tasks import BackgroundTask, run_in_background
from app.ui.widgets.labels import wrapping_label


class LayersPage(QWizardPage):
    """The suggested layer range, editable; a range the model cannot have is refused here."""

    def __init__(self, state: WizardState) -> None:
        super().__init__()
        self.state = state
        self.setTitle("How much of the model")
        layout = QVBoxLayout(self)
        self.suggestion = wrapping_label()
        layout.addWidget(self.suggestion)
        self.tracker_note = wrapping_label()  # the tracker's suggestion, read in the background
        layout.addWidget(self.tracker_note)
        form = QFormLayout()
        self.start_spin = QSpinBox()
        self.end_spin = QSpinBox()
        for spin in (self.start_spin, self.end_spin):
            spin.setRange(0, 999)
            spin.valueChanged.connect(self._validate)
        row = QHBoxLayout()
        row.addWidget(self.start_spin)
        row.addWidget(QLabel("up to"))
        row.addWidget(self.end_spin)
        row.addStretch(1)
        form.addRow("Layers from:", row)
        self.layers_problem = wrapping_label()
        self.layers_problem.setObjectName("problem")
        self.layers_problem.setStyleSheet("color: #b3261e;")
        form.addRow("", self.layers_problem)
        self.cap_spin = QSpinBox()
        self.cap_spin.setRange(0, 1_000_000)
        self.cap_spin.setSingleStep(256)
        self.cap_spin.setSuffix(" MB")
        self.cap_spin.setSpecialValueText("No limit")
        self.cap_spin.valueChanged.connect(self._validate)
        self.cap_spin.setMinimumWidth(120)
        cap_row = QHBoxLayout()
        cap_row.addWidget(self.cap_spin)
        cap_row.addStretch(1)
        form.addRow("Memory limit:", cap_row)
        self.cap_problem = wrapping_label()
        self.cap_problem.setStyleSheet("color: #b3261e;")
        form.addRow("", self.cap_problem)
        layout.addLayout(form)
        self.hint = wrapping_label()
        layout.addWidget(self.hint)
        layout.addStretch(1)
        self._problem: str | None = None
        self._asking: BackgroundTask | None = None
        self._touched = False  # the contributor changed the range: a late answer keeps it
        self._filling = False
        for spin in (self.start_spin, self.end_spin):
            spin.valueChanged.connect(self._on_user_change)

    def _on_user_change(self) -> None:
        if not self._filling:
            self._touched = True

    def _fill(self, start: int, end: int) -> None:
        self._filling = True
        try:
            self.start_spin.setValue(start)
            self.end_spin.setValue(end)
        finally:
            self._filling = False

    def tracker_question(self) -> dict[str, Any] | None:
        """What to ask the tracker, or None (no tracker set, or an older node's hardware)."""
        hardware = self.state.hardware or {}
        model = hardware.get("model") or {}
        room, count = hardware.get("room_layers"), model.get("layer_count")
        if not self.state.tracker_url or not isinstance(room, int) or not isinstance(count, int):
            return None
        return {
            "model": str(model.get("model_id") or ""),
            "layer_count": count,
            "max_layers": room,
            "recipe": hardware.get("recipe_id"),
        }

    def ask_tracker(self) -> None:
        """Ask the tracker in the background; the page stays usable meanwhile."""
        question = self.tracker_question()
        if question is None or self.state.sample:
            return
        if self._asking is not None:
            self._asking.discard()
        url = str(self.state.tracker_url)
        self.tracker_note.setText(f"Asking {url} which layers the network needs most…")
        self._asking = run_in_background(
            lambda: fetch_allocation(url, **question),
            on_success=self.apply_tracker_suggestion,
            on_failure=self.apply_tracker_failure,
            parent=self,
        )

    def apply_tracker_suggestion(self, allocation: TrackerAllocation) -> None:
        """Show the tracker's range and sentence; fill it in unless the contributor edited."""
        self._asking = None
        if not allocation.fits or allocation.start is None or allocation.end is None:
            self.tracker_note.setText(f"The network says: {allocation.sentence}")
            return
        start, end = allocation.start, allocation.end
        if not self._touched:
            self._fill(start, end)
        self.tracker_note.setText(
            f"The network suggests layers {start} up to {end}: {allocation.sentence}"
        )
        self._validate()

    def apply_tracker_failure(self, exc: BaseException) -> None:
        self._asking = None
        sentence = getattr(exc, "sentence", None) or str(exc)
        self.tracker_note.setText(
            f"The tracker could not suggest layers: {sentence} The range above fits this computer."
        )

    def initializePage(self) -> None:
        hardware = self.state.hardware or {}
        count = self.state.layer_count
        suggested = hardware.get("suggested_layers")
        chosen = self.state.layers or (tuple(suggested) if suggested else None)
        if chosen is None:
            chosen = (0, count or 1)
        self._fill(int(chosen[0]), int(chosen[1]))
        self._touched = self.state.layers is not None  # a range chosen before is kept
        self.cap_spin.setValue(self.state.memory_cap_mb or 0)
        sentence = hardware.get("suggestion") or ""
        if suggested:
            intro = f"MeshNet suggests layers {suggested[0]} up to {suggested[1]}."
        else:
            intro = "MeshNet could not suggest a range that fits; choose one yourself."
        self.suggestion.setText(f"{intro} {sentence}".strip())
        self.hint.setText(
            (f"This model has {count} layers; 0 up to {count} runs all of them. " if count else "")
            + "Fewer layers need less memory. The next steps test exactly this choice."
        )
        self.tracker_note.setText("")
        self._validate()
        self.ask_tracker()

    def chosen_layers(self) -> tuple[int, int]:
        return (self.start_spin.value(), self.end_spin.value())

    def problem(self) -> str | None:
        start, end = self.chosen_layers()
        count = self.state.layer_count
        if count is not None and end > count:
            return f"This model has only {count} layers: the range must end at {count} or before."
        if start >= end:
            return "The first number must be smaller than the second."
        return None

    def cap_problem_sentence(self) -> str | None:
        cap = self.cap_spin.value()
        if 0 < cap < MIN_MEMORY_CAP_MB:
            return f"Set at least {MIN_MEMORY_CAP_MB} MB, or no limit."
        return None

    def _validate(self) -> None:
        self._problem = self.problem()
        self.layers_problem.setText(self._problem or "")
        self.layers_problem.setVisible(self._problem is not None)
        cap_problem = self.cap_problem_sentence()
        self.cap_problem.setText(cap_problem or "")
        self.cap_problem.setVisible(cap_problem is not None)
        self.completeChanged.emit()

    def isComplete(self) -> bool:
        return self._problem is None and self.cap_problem_sentence() is None

    def validatePage(self) -> bool:
        self.state.layers = self.chosen_layers()
        self.state.memory_cap_mb = self.cap_spin.value() or None
        return True
