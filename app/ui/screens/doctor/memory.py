"""The doctor wizard's memory page: how much of this computer to use, as a plain choice.

Nobody is asked for layers. The contributor picks a share of the graphics
memory (a little, half, most); the page estimates how many layers fit in that
share and asks the tracker, in the background, which range the network needs
most from such a computer (the allocation). When the tracker cannot say, a
local range that fits is used. The range only shows in Details later.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QButtonGroup, QLabel, QRadioButton, QVBoxLayout, QWizardPage

from app.settings_model import MIN_MEMORY_CAP_MB
from app.texts import plain, text
from app.tracker_api import TrackerAllocation, fetch_allocation
from app.ui.screens.doctor.state import WizardState, gigabytes
from app.ui.tasks import BackgroundTask, run_in_background
from app.ui.widgets.labels import wrapping_label

MIB = 1024**2
# (choice, share of the device's memory); "half" leaves room for games
CHOICES: tuple[tuple[str, float], ...] = (("little", 0.25), ("half", 0.5), ("most", 0.9))
DEFAULT_CHOICE = "half"


def room_at_cap(hardware: dict[str, Any], cap_bytes: int) -> int | None:
    """Layers that fit in ``cap_bytes``: the hardware check's room, scaled to the share.

    ``room_layers`` was measured against the free memory; a smaller cap holds
    proportionally fewer. None when the hardware check did not say.
    """
    room = hardware.get("room_layers")
    free = (hardware.get("device") or {}).get("free_bytes")
    if not isinstance(room, int):
        suggested = hardware.get("suggested_layers")
        if not suggested:
            return None
        room = int(suggested[1]) - int(suggested[0])
    if not isinstance(free, int | float) or free <= 0:
        return room
    return int(room * min(1.0, cap_bytes / free))


class MemoryPage(QWizardPage):
    """A share of the memory, validated; the network (or a local fallback) picks the part."""

    def __init__(self, state: WizardState) -> None:
        super().__init__()
        self.state = state
        self.setTitle(text("memory.title"))
        layout = QVBoxLayout(self)
        layout.addWidget(wrapping_label(text("memory.intro")))
        self.use_label = QLabel(text("memory.gpu"))
        layout.addWidget(self.use_label)
        self.group = QButtonGroup(self)
        self.buttons: dict[str, QRadioButton] = {}
        for name, _share in CHOICES:
            button = QRadioButton()
            self.group.addButton(button)
            self.buttons[name] = button
            layout.addWidget(button)
            button.toggled.connect(self._choice_changed)
        self.use_label.setBuddy(self.buttons[CHOICES[0][0]])
        self.problem_label = wrapping_label()
        self.problem_label.setObjectName("problem")
        self.problem_label.setStyleSheet("color: #d0473e; font-weight: bold;")
        layout.addWidget(self.problem_label)
        self.holds = wrapping_label()
        layout.addWidget(self.holds)
        self.network_note = wrapping_label()  # the tracker's answer, read in the background
        layout.addWidget(self.network_note)
        layout.addStretch(1)
        self.layers: tuple[int, int] | None = None  # the part to test (Details only)
        self._asking: BackgroundTask | None = None
        self._filling = False

    # --- the choice --------------------------------------------------------------
    def total_bytes(self) -> int:
        device = (self.state.hardware or {}).get("device") or {}
        total = device.get("total_bytes") or device.get("free_bytes") or 0
        return int(total) if isinstance(total, int | float) else 0

    def choice(self) -> str:
        for name, button in self.buttons.items():
            if button.isChecked():
                return name
        return DEFAULT_CHOICE

    def choose(self, name: str) -> None:
        self.buttons[name].setChecked(True)

    def cap_bytes(self) -> float | None:
        """The chosen share of the memory; None when the size is unknown."""
        total = self.total_bytes()
        return total * dict(CHOICES)[self.choice()] if total > 0 else None

    def cap_mb(self) -> int | None:
        """The memory cap the node is given for the chosen share."""
        cap = self.cap_bytes()
        return None if cap is None else int(cap) // MIB

    def room(self) -> int | None:
        """Layers that fit in the chosen share (estimated from the hardware check)."""
        cap = self.cap_bytes()
        hardware = self.state.hardware or {}
        return room_at_cap(hardware, int(cap)) if cap else hardware.get("room_layers")

    def problem(self) -> str | None:
        cap = self.cap_mb()
        if cap is None:
            return None
        room = self.room()
        if cap < MIN_MEMORY_CAP_MB or (room is not None and room < 1):
            return text("memory.too-little")
        return None

    def local_range(self) -> tuple[int, int]:
        """A part that fits this computer when the network cannot choose."""
        count = self.state.layer_count or 1
        room = self.room()
        if room is None:
            suggested = (self.state.hardware or {}).get("suggested_layers")
            return (int(suggested[0]), int(suggested[1])) if suggested else (0, count)
        return (0, max(1, min(count, room)))

    # --- Qt --------------------------------------------------------------------
    def initializePage(self) -> None:
        total = self.total_bytes()
        cpu = ((self.state.hardware or {}).get("device") or {}).get("kind") == "cpu"
        for name, share in CHOICES:
            key = f"memory.{name}.cpu" if cpu else f"memory.{name}"
            self.buttons[name].setText(text(key, size=gigabytes(total * share)))
            self.buttons[name].setAccessibleName(plain(key).format(size=gigabytes(total * share)))
        self._filling = True
        self.choose(self._initial_choice(total))
        self._filling = False
        self.network_note.setText("")
        self._choice_changed()

    def _initial_choice(self, total: int) -> str:
        """The share nearest the cap saved before; half for a first run."""
        cap = self.state.memory_cap_mb
        if not cap or total <= 0:
            return DEFAULT_CHOICE
        fraction = cap * MIB / total
        return min(CHOICES, key=lambda choice: abs(choice[1] - fraction))[0]

    def _choice_changed(self, *_args: object) -> None:
        if self._filling:
            return
        problem = self.problem()
        self.problem_label.setText(problem or "")
        self.problem_label.setVisible(problem is not None)
        self.layers = self.local_range()
        count = self.state.layer_count
        whole = count is not None and self.layers == (0, count)
        self.holds.setText(
            "" if problem else text("memory.holds.all" if whole else "memory.holds.part")
        )
        self.completeChanged.emit()
        if problem is None:
            self.ask_tracker()

    def tracker_question(self) -> dict[str, Any] | None:
        """What to ask the tracker, or None (no tracker, or an older node's hardware)."""
        hardware = self.state.hardware or {}
        model = hardware.get("model") or {}
        count = model.get("layer_count")
        room = self.room()
        if not self.state.tracker_url or not isinstance(room, int) or not isinstance(count, int):
            return None
        return {
            "model": str(model.get("model_id") or ""),
            "layer_count": count,
            "max_layers": max(1, min(room, count)),
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
        self.network_note.setText(text("memory.asking"))
        self._asking = run_in_background(
            lambda: fetch_allocation(url, **question),
            on_success=self.apply_tracker_suggestion,
            on_failure=self.apply_tracker_failure,
            parent=self,
        )

    def apply_tracker_suggestion(self, allocation: TrackerAllocation) -> None:
        """Use the network's part when it fits; else keep the local one."""
        self._asking = None
        if not allocation.fits or allocation.start is None or allocation.end is None:
            self.network_note.setText(text("memory.network.failed"))
            return
        self.layers = (allocation.start, allocation.end)
        self.network_note.setText(text("memory.network"))
        self.network_note.setToolTip(allocation.sentence)  # the engineer's words, on hover

    def apply_tracker_failure(self, exc: BaseException) -> None:
        self._asking = None
        self.network_note.setText(text("memory.network.failed"))
        self.network_note.setToolTip(getattr(exc, "sentence", None) or str(exc))

    def isComplete(self) -> bool:
        return self.problem() is None

    def validatePage(self) -> bool:
        self.state.layers = self.layers or self.local_range()
        self.state.memory_cap_mb = self.cap_mb()
        return True
