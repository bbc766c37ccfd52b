"""Settings' pause rules (simple): when the person at the computer needs it back —
a busy or hot graphics card, a listed program, battery power, until idle."""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QLabel, QVBoxLayout, QWidget

from app.settings_model import AppSettings
from app.texts import plain, text
from app.ui.screens.settings.fields import row, spin
from app.ui.widgets.settings_fields import ProgramsField, form_page


class PausePage(QWidget):
    def __init__(self, problems: dict[str, QLabel], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.gpu_busy = QCheckBox(text("settings.gpu.busy"))
        self.gpu_hot = QCheckBox(text("settings.gpu.hot"))
        self.gpu_temp = spin(0, 150, " °C")
        self.gpu_hot.toggled.connect(self.gpu_temp.setEnabled)
        self.gpu_temp.setAccessibleName(plain("settings.gpu.hot"))
        # beside the two rules: where the card cannot be read, they never pause it
        self.gpu_note = QLabel(text("settings.gpu.unmeasured"))
        self.gpu_note.setWordWrap(True)
        self.gpu_note.setVisible(False)
        self.programs = ProgramsField()
        self.on_battery = QCheckBox(text("settings.battery"))
        self.when_idle = QCheckBox(text("settings.idle.after"))
        self.idle = spin(0, 1000, text("settings.idle.minutes"))
        self.when_idle.toggled.connect(self.idle.setEnabled)
        self.idle.setAccessibleName(plain("settings.idle.name"))
        untouched = QLabel(text("settings.idle.untouched"))
        untouched.setWordWrap(True)
        form = form_page(
            [
                (
                    text("settings.gpu"),
                    [
                        self.gpu_busy,
                        row(self.gpu_hot, self.gpu_temp),
                        self.gpu_note,
                        problems["pause_above_gpu_temp_c"],
                    ],
                ),
                (
                    text("settings.programs"),
                    [
                        QLabel(text("settings.programs.intro")),
                        self.programs,
                        problems["pause_programs"],
                    ],
                ),
                (text("settings.power"), [self.on_battery]),
                (
                    text("settings.idle"),
                    [row(self.when_idle, self.idle), untouched, problems["idle_minutes"]],
                ),
                ("", [QLabel(text("settings.resumes"))]),
            ]
        )
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(form)
        column.addStretch(1)

    def fill(self, s: AppSettings) -> None:
        self.gpu_busy.setChecked(s.pause_when_gpu_busy)
        self.gpu_hot.setChecked(s.pause_above_gpu_temp_c is not None)
        self.gpu_temp.setValue(s.pause_above_gpu_temp_c or 85)
        self.gpu_temp.setEnabled(s.pause_above_gpu_temp_c is not None)
        self.programs.set_programs(s.pause_programs)
        self.on_battery.setChecked(s.pause_on_battery)
        self.when_idle.setChecked(s.idle_minutes is not None)
        self.idle.setValue(s.idle_minutes or 10)
        self.idle.setEnabled(s.idle_minutes is not None)

    def show_gpu_measurable(self, measurable: bool) -> None:
        """Say beside the graphics-card rules when this card cannot be read."""
        self.gpu_note.setVisible(not measurable)
