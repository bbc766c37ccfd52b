"""Settings' first page, the simple one: the network, which graphics card, how much
memory (in GB), start at login, and the leaderboard name. Plain words only
(tests/app/ui/test_plain_screens.py reads it as the main path)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QCheckBox, QLabel, QVBoxLayout, QWidget

from app.settings_model import AppSettings
from app.texts import text
from app.ui.screens.settings.fields import CardChoice, GigabyteSpin, row
from app.ui.widgets.labels import wrapping_label
from app.ui.widgets.leaderboard_fields import LeaderboardFields
from app.ui.widgets.settings_fields import form_page
from core.network.joined_network import JoinedNetwork


class ComputerPage(QWidget):
    def __init__(
        self,
        hardware: dict[str, Any] | None,
        problems: dict[str, QLabel],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.network_label = wrapping_label()
        self.network_label.setObjectName("joinedNetwork")
        self.device_field = CardChoice(hardware)
        self.memory_cap = GigabyteSpin()
        self.memory_hint = wrapping_label(text("settings.memory.hint"))
        self.start_at_login = QCheckBox(text("settings.login"))
        self.leaderboard = LeaderboardFields()  # saved with the rest; app/credit_link.py posts it
        form = form_page(
            [
                (
                    text("settings.gpu"),
                    [self.device_field.combo, self.device_field.hint],
                ),
                (
                    text("settings.memory"),
                    [row(self.memory_cap), self.memory_hint, problems["memory_cap_mb"]],
                ),
                ("", [self.start_at_login, problems["start_at_login"]]),
            ]
        )
        column = QVBoxLayout(self)
        column.addWidget(self.network_label)
        column.addWidget(form)
        column.addWidget(self.leaderboard)
        column.addStretch(1)

    def fill(self, s: AppSettings, advanced_device: bool) -> None:
        """Show ``s``; a device only the Advanced page can say leaves the card choice off."""
        self.device_field.set_value(None if advanced_device else s.device)
        self.memory_cap.set_mb(s.memory_cap_mb)
        self.start_at_login.setChecked(s.start_at_login)
        self.leaderboard.set_values(s.display_name, s.team)

    def follow_advanced_device(self, device: str) -> None:
        """The Advanced page names a device: the card choice yields to it, and says so."""
        self.device_field.combo.setEnabled(not device)
        if device:
            self.device_field.hint.setText(text("settings.card.advanced", device=device))
        else:
            self.device_field.hint.setText(self.device_field.found_hint)

    def show_network(self, joined: JoinedNetwork | None) -> None:
        """Say which network this computer belongs to (the wizard's join page changes it)."""
        if joined is None:
            self.network_label.setText(text("settings.network.none"))
            return
        name = joined.name or joined.tracker_url
        if joined.operator:
            name = text("join.network-by", name=name, operator=joined.operator)
        self.network_label.setText(text("settings.network", network=name))
