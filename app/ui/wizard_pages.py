"""The doctor wizard's pages (the wizard itself and its flow: app/ui/doctor_wizard.py).

Pages that do work run one ``meshnet-node`` command each through a
:class:`~app.ui.json_child.JsonChild` and stay incomplete (Next disabled) until
it has finished; the wizard also holds Back while a page is busy. Every page
keeps its logic in plain methods (``apply_hardware``, ``finish_test``...) so a
test, or the screenshot mode, can drive it without a child.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
    QWizardPage,
)

from app.settings_model import MIN_MEMORY_CAP_MB
from app.tracker_api import TrackerAllocation, fetch_allocation
from app.ui.json_child import JsonChild
from app.ui.tasks import BackgroundTask, run_in_background

log = logging.getLogger(__name__)

NodeCommand = Callable[..., list[str]]


@dataclass
class WizardState:
    """What the pages found and chose, shared along the way."""

    model: str | None = None
    tracker_url: str | None = None  # set: the layers page asks it which range the swarm needs
    device: str | None = None
    memory_cap_mb: int | None = None
    layers: tuple[int, int] | None = None
    hardware: dict[str, Any] | None = None
    report: dict[str, Any] | None = None
    report_path: str | None = None
    error: str | None = None  # the doctor could not run at all
    sample: bool = False  # screenshot mode: never start a child
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def layer_count(self) -> int | None:
        model = (self.hardware or {}).get("model") or {}
        count = model.get("layer_count")
        return count if isinstance(count, int) else None

    def node_options(self) -> list[str]:
        """``--model/--device/--memory-cap-mb`` as chosen so far."""
        options: list[str] = []
        if self.model:
            options += ["--model", self.model]
        if self.device:
            options += ["--device", self.device]
        if self.memory_cap_mb:
            options += ["--memory-cap-mb", str(self.memory_cap_mb)]
        return options


def gigabytes(n: Any) -> str:
    return f"{n / 1e9:.1f} GB" if isinstance(n, int | float) else "unknown"


def _wrapping_label(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class WelcomePage(QWizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle("Check this computer")
        layout = QVBoxLayout(self)
        layout.addWidget(
            _wrapping_label(
                "MeshNet lets this computer run part of a large language model for others "
                "while you are not using it."
            )
        )
        layout.addWidget(
            _wrapping_label(
                "This check looks at your hardware, suggests how much of the model this "
                "computer can hold, gets the model if it is not here yet, and runs a real "
                "test. It takes a few minutes and you can stop it at any time."
            )
        )
        layout.addStretch(1)


class ChildPage(QWizardPage):
    """A page whose work is one child command: busy while it runs, complete when it is done."""

    busy_changed = Signal(bool)

    def __init__(self, state: WizardState, node_command: NodeCommand, title: str) -> None:
        super().__init__()
        self.state = state
        self.node_command = node_command
        self.setTitle(title)
        self.child: JsonChild | None = None
        self.ok = False
        self.progress_events = 0  # in the current run
        self.layout_ = QVBoxLayout(self)
        self.status = _wrapping_label()
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.retry_button = QPushButton("Try again")
        self.retry_button.clicked.connect(self.start)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.retry_button)
        self.layout_.addWidget(self.status)
        self.layout_.addWidget(self.progress)
        self.layout_.addLayout(buttons)
        self._set_idle()

    @property
    def busy(self) -> bool:
        return self.child is not None and self.child.running

    def isComplete(self) -> bool:
        return self.ok and not self.busy

    def initializePage(self) -> None:
        if not self.state.sample:
            self.start()

    def cleanupPage(self) -> None:
        self.cancel()

    def argv(self) -> list[str]:
        raise NotImplementedError

    def start(self) -> None:
        if self.busy:
            return
        self.ok = False
        self.progress_events = 0
        self.before_start()
        self.child = JsonChild(self)
        self.child.event.connect(self.on_event)
        self.child.log_line.connect(self.on_log_line)
        self.child.finished.connect(self._on_finished)
        self.cancel_button.setVisible(True)
        self.retry_button.setVisible(False)
        self.progress.setVisible(True)
        self.progress.setRange(0, 0)  # busy until the first progress event
        self.child.start(self.argv())
        self._changed()

    def cancel(self) -> None:
        if self.busy:
            assert self.child is not None
            self.status.setText("Stopping…")
            self.cancel_button.setEnabled(False)
            self.child.cancel()

    def before_start(self) -> None:
        """Reset what the page shows before a (new) run."""

    def on_event(self, event: dict[str, Any]) -> None:
        if event.get("kind") == "progress":
            self.progress_events += 1
            self.show_progress(event)

    def on_log_line(self, line: str) -> None:
        log.debug("child: %s", line)
        self.state.extra.setdefault("log", []).append(line)

    def show_progress(self, event: dict[str, Any]) -> None:
        data = event.get("data") or {}
        done, total = data.get("done"), data.get("total")
        if isinstance(done, int) and isinstance(total, int) and total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(min(done, total))
        if event.get("message"):
            self.status.setText(str(event["message"]))

    def _on_finished(self, exit_code: int, stdout: str) -> None:
        cancelled = self.child is not None and self.child.cancelled
        self._set_idle()
        if cancelled:
            self.ok = False
            self.on_cancelled()
            self.retry_button.setVisible(True)
        else:
            self.ok = self.on_finished(exit_code, stdout)
            self.retry_button.setVisible(not self.ok)
        self._changed()

    def on_finished(self, exit_code: int, stdout: str) -> bool:
        """Judge the finished command; True when the page's work is done."""
        raise NotImplementedError

    def on_cancelled(self) -> None:
        self.status.setText("Stopped. Nothing was changed on this computer.")

    def last_error_sentence(self, fallback: str) -> str:
        """The child's own sentence for a failure (``meshnet-node: ... [reason]``)."""
        for line in reversed(self.state.extra.get("log", [])):
            if line.startswith("meshnet-node: "):
                return line.removeprefix("meshnet-node: ").rsplit(" [", 1)[0]
        return fallback

    def _set_idle(self) -> None:
        self.cancel_button.setVisible(False)
        self.cancel_button.setEnabled(True)
        self.retry_button.setVisible(False)
        self.progress.setVisible(False)

    def _changed(self) -> None:
        self.completeChanged.emit()
        self.busy_changed.emit(self.busy)


class HardwarePage(ChildPage):
    def __init__(self, state: WizardState, node_command: NodeCommand) -> None:
        super().__init__(state, node_command, "Your hardware")
        self.cancel_button.setText("Cancel check")
        form = QFormLayout()
        self.device_label = _wrapping_label()
        self.memory_label = _wrapping_label()
        self.disk_label = _wrapping_label()
        self.model_label = _wrapping_label()
        form.addRow("Device:", self.device_label)
        form.addRow("Memory:", self.memory_label)
        form.addRow("Free disk:", self.disk_label)
        form.addRow("Model:", self.model_label)
        self.details = QWidget()
        self.details.setLayout(form)
        self.layout_.insertWidget(1, self.details)
        self.layout_.addStretch(1)

    def argv(self) -> list[str]:
        return self.node_command("hardware", "--json", *self.state.node_options())

    def before_start(self) -> None:
        self.details.setVisible(False)
        self.status.setText("Looking at this computer's hardware…")

    def on_finished(self, exit_code: int, stdout: str) -> bool:
        try:
            hardware = json.loads(stdout)
        except json.JSONDecodeError:
            hardware = None
        if exit_code != 0 or not isinstance(hardware, dict):
            self.status.setText(
                self.last_error_sentence("The hardware check did not finish.")
                + " Try again, or check Settings (device and model)."
            )
            return False
        self.apply_hardware(hardware)
        return True

    def apply_hardware(self, hardware: dict[str, Any]) -> None:
        """Show a ``meshnet-node hardware --json`` result and keep it for the next pages."""
        self.state.hardware = hardware
        device = hardware.get("device") or {}
        kind = device.get("kind", "cpu")
        what = "processor (CPU)" if kind == "cpu" else "graphics card"
        name = device.get("name") or kind
        self.device_label.setText(
            f"{name}, {what}: {gigabytes(device.get('free_bytes'))} free "
            f"of {gigabytes(device.get('total_bytes'))}"
        )
        self.memory_label.setText(
            f"{gigabytes(hardware.get('ram_available_bytes'))} available "
            f"of {gigabytes(hardware.get('ram_total_bytes'))}"
        )
        self.disk_label.setText(f"{gigabytes(hardware.get('disk_free_bytes'))} free for models")
        model = hardware.get("model") or {}
        where = "on this computer" if model.get("imported") else "not on this computer yet"
        self.model_label.setText(
            f"{model.get('model_id', 'unknown')}: {model.get('layer_count', '?')} layers, {where}"
        )
        self.details.setVisible(True)
        self.status.setText(
            "This is what MeshNet found. Next: choose how much of the model to run."
        )


class LayersPage(QWizardPage):
    """The suggested layer range, editable; a range the model cannot have is refused here."""

    def __init__(self, state: WizardState) -> None:
        super().__init__()
        self.state = state
        self.setTitle("How much of the model")
        layout = QVBoxLayout(self)
        self.suggestion = _wrapping_label()
        layout.addWidget(self.suggestion)
        self.tracker_note = _wrapping_label()  # the tracker's suggestion, read in the background
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
        self.layers_problem = _wrapping_label()
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
        self.cap_problem = _wrapping_label()
        self.cap_problem.setStyleSheet("color: #b3261e;")
        form.addRow("", self.cap_problem)
        layout.addLayout(form)
        self.hint = _wrapping_label()
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
