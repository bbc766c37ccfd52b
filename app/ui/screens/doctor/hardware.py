"""The doctor wizard's hardware page: ``meshnet-node hardware --json``, shown in words."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtWidgets import QFormLayout, QLabel, QWidget

from app.texts import text
from app.ui.screens.doctor.child_page import ChildPage
from app.ui.screens.doctor.state import NodeCommand, WizardState, gigabytes
from app.ui.widgets.labels import wrapping_label


class HardwarePage(ChildPage):
    def __init__(self, state: WizardState, node_command: NodeCommand) -> None:
        super().__init__(state, node_command, text("hardware.title"))
        self.cancel_button.setText(text("hardware.cancel"))
        form = QFormLayout()
        self.device_label = wrapping_label()
        self.memory_label = wrapping_label()
        self.disk_label = wrapping_label()
        self.model_label = wrapping_label()
        for key, field in (
            ("hardware.device", self.device_label),
            ("hardware.memory", self.memory_label),
            ("hardware.disk", self.disk_label),
            ("hardware.model", self.model_label),
        ):
            label = QLabel(text(key))
            label.setBuddy(field)  # a screen reader reads the pair; Alt+letter reaches it
            field.setAccessibleName(text(key).replace("&", "").rstrip(":"))
            form.addRow(label, field)
        self.details = QWidget()
        self.details.setLayout(form)
        self.layout_.insertWidget(1, self.details)
        self.layout_.addStretch(1)

    def argv(self) -> list[str]:
        # measured without the saved memory cap: the next page offers shares of it all
        options = self.state.node_options()
        if "--memory-cap-mb" in options:
            at = options.index("--memory-cap-mb")
            del options[at : at + 2]
        return self.node_command("hardware", "--json", *options)

    def before_start(self) -> None:
        self.details.setVisible(False)
        self.status.setText(text("hardware.looking"))

    def on_finished(self, exit_code: int, stdout: str) -> bool:
        try:
            hardware = json.loads(stdout)
        except json.JSONDecodeError:
            hardware = None
        if exit_code != 0 or not isinstance(hardware, dict):
            self.status.setText(text("hardware.failed"))
            self.status.setToolTip(self.last_error_sentence(""))
            return False
        self.apply_hardware(hardware)
        return True

    def apply_hardware(self, hardware: dict[str, Any]) -> None:
        """Show a ``meshnet-node hardware --json`` result and keep it for the next pages."""
        self.state.hardware = hardware
        device = hardware.get("device") or {}
        kind = device.get("kind", "cpu")
        name = device.get("name") or kind
        self.device_label.setText(
            text(
                "hardware.cpu" if kind == "cpu" else "hardware.gpu",
                name=name,
                free=gigabytes(device.get("free_bytes")),
                total=gigabytes(device.get("total_bytes")),
            )
        )
        self.memory_label.setText(
            text(
                "hardware.ram",
                free=gigabytes(hardware.get("ram_available_bytes")),
                total=gigabytes(hardware.get("ram_total_bytes")),
            )
        )
        self.disk_label.setText(
            text("hardware.disk.free", free=gigabytes(hardware.get("disk_free_bytes")))
        )
        model = hardware.get("model") or {}
        model_id = str(model.get("model_id") or "?")
        name_only = model_id.rstrip("/").rsplit("/", 1)[-1]
        key = "hardware.model.here" if model.get("imported") else "hardware.model.missing"
        self.model_label.setText(text(key, model=name_only))
        self.details.setVisible(True)
        self.status.setText(text("hardware.done"))
