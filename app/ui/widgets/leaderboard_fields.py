"""The optional name and team shown on the network's leaderboard (docs/credits.md).

One box, used by the wizard's last page and the settings window: a sentence on
what the leaderboard is, and two fields that may stay empty (the default). The
values are cleaned as the tracker keeps them (one printable line, at most 64
characters), so what is saved is what the leaderboard shows.
"""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QGroupBox, QLabel, QLineEdit, QWidget

from app.texts import plain, text
from app.ui.widgets.labels import wrapping_label
from core.network.credit_account import MAX_LABEL_LEN, clean_label


def _field(hint_key: str, name_key: str) -> QLineEdit:
    edit = QLineEdit()
    edit.setMaxLength(MAX_LABEL_LEN)
    edit.setPlaceholderText(text(hint_key))
    edit.setAccessibleName(text(name_key))
    return edit


class LeaderboardFields(QGroupBox):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(text("leaderboard.title"), parent)
        self.setAccessibleName(plain("leaderboard.title"))
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.intro = wrapping_label(text("leaderboard.intro"))
        form.addRow(self.intro)
        self.name_edit = _field("leaderboard.name.hint", "leaderboard.name.name")
        self.team_edit = _field("leaderboard.team.hint", "leaderboard.team.name")
        for key, edit in (
            ("leaderboard.name", self.name_edit),
            ("leaderboard.team", self.team_edit),
        ):
            label = QLabel(text(key))
            label.setBuddy(edit)
            form.addRow(label, edit)

    def values(self) -> tuple[str, str]:
        """(display name, team), cleaned; empty strings when skipped."""
        return clean_label(self.name_edit.text()), clean_label(self.team_edit.text())

    def set_values(self, display_name: str, team: str) -> None:
        self.name_edit.setText(display_name)
        self.team_edit.setText(team)
