"""The doctor wizard's hardware page: ``meshnet-node hardware --json``, shown in words."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtWidgets import QFormLayout, QWidget

from app.ui.screens.doctor.child_page import ChildPage
from app.ui.screens.doctor.state import NodeCommand, WizardState, gigabytes
from app.ui.widgets.labels import wrapping_label


class HardwarePage(ChildPage):
    def __init__(self, state: WizardState, node_command: NodeCommand) -> None:
        super().__init__(state, node_command, "Your hardware")
        self.cancel_button.setText("Cancel check")
        form = QFormLayout()
        self.device_label = wrapping_label()
        self.memory_label = wrapping_label()
        self.disk_label = wrapping_label()
        self.model_label = wrapping_label()
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
