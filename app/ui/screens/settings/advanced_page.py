"""Settings' Advanced page: what a person running their own network or testing models
changes — the model folder, the layers, a device string, batch jobs, a tracker of
one's own and its join token. Engineering words are allowed here (marked Advanced)."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.settings_model import AppSettings
from app.texts import plain, text
from app.ui.screens.settings.fields import row, spin
from app.ui.widgets.labels import wrapping_label
from app.ui.widgets.settings_fields import form_page, problem_label


class AdvancedPage(QWidget):
    def __init__(self, problems: dict[str, QLabel], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        intro = wrapping_label(text("settings.advanced.intro"))
        self.model_edit = QLineEdit()
        self.model_edit.setPlaceholderText(text("settings.model.default"))
        self.browse_button = QPushButton(text("settings.model.browse"))
        self.download_button = QPushButton(text("settings.model.download"))
        self.own_layers = QCheckBox(text("settings.layers.own"))
        self.layer_start = spin(0, 999)
        self.layer_end = spin(0, 999)
        up_to = QLabel(text("settings.layers.up-to"))
        up_to.setBuddy(self.layer_end)
        self.own_layers.toggled.connect(self.layer_start.setEnabled)
        self.own_layers.toggled.connect(self.layer_end.setEnabled)
        self.layer_start.setAccessibleName(plain("settings.layers.from.name"))
        self.layer_end.setAccessibleName(plain("settings.layers.up-to.name"))
        self.device_edit = QLineEdit()
        self.device_edit.setPlaceholderText(text("settings.device.own.hint"))
        self.device_edit.setAccessibleName(plain("settings.device.own.name"))
        self.batch_jobs = QCheckBox(text("settings.batch"))
        self.batch_jobs.setToolTip(text("settings.batch.tip"))
        self.own_tracker = QCheckBox(text("join.advanced"))
        self.own_tracker.setAccessibleName(plain("join.advanced.name"))
        self.url_edit = QLineEdit()
        self.url_edit.setPlaceholderText("https://tracker.example.org")
        self.url_edit.setAccessibleName(text("settings.url.name"))
        self.check_button = QPushButton(text("settings.check"))
        self.url_result = problem_label()
        self.token_edit = QLineEdit()
        self.token_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.token_edit.setPlaceholderText(text("settings.token.none"))
        self.token_edit.setAccessibleName(plain("settings.token.name"))
        self.show_token = QCheckBox(text("settings.token.show"))
        self.show_token.toggled.connect(
            lambda shown: self.token_edit.setEchoMode(
                QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password
            )
        )
        url_row = QHBoxLayout()
        url_row.addWidget(self.url_edit, 1)
        url_row.addWidget(self.check_button)
        token_row = QHBoxLayout()
        token_row.addWidget(self.token_edit, 1)
        token_row.addWidget(self.show_token)
        self.own_tracker_box = form_page(
            [
                (text("settings.url"), [url_row, self.url_result, problems["tracker_url"]]),
                (
                    text("settings.token"),
                    [token_row, QLabel(text("settings.token.note")), problems["join_token"]],
                ),
            ]
        )
        form = form_page(
            [
                (
                    text("settings.model"),
                    [
                        self.model_edit,
                        row(self.browse_button, self.download_button),
                        problems["model"],
                    ],
                ),
                (
                    text("settings.layers"),
                    [
                        self.own_layers,
                        row(self.layer_start, up_to, self.layer_end),
                        problems["layers"],
                    ],
                ),
                (text("settings.device"), [self.device_edit, problems["device"]]),
                ("", [self.batch_jobs]),
            ]
        )
        column = QVBoxLayout(self)
        column.addWidget(intro)
        column.addWidget(form)
        column.addWidget(self.own_tracker)
        column.addWidget(self.own_tracker_box)
        column.addStretch(1)
        self.own_tracker.toggled.connect(self.own_tracker_box.setVisible)

    def fill(self, s: AppSettings, device: str) -> None:
        """Show ``s``; ``device`` is the device string only this page can say ("" if none)."""
        self.url_edit.setText(s.tracker_url)
        self.own_tracker.setChecked(bool(s.tracker_url))
        self.own_tracker_box.setVisible(self.own_tracker.isChecked())
        self.model_edit.setText(s.model or "")
        self.own_layers.setChecked(s.layers is not None)
        start, end = s.layers or (0, 0)
        self.layer_start.setValue(start)
        self.layer_end.setValue(end)
        self.layer_start.setEnabled(s.layers is not None)
        self.layer_end.setEnabled(s.layers is not None)
        self.device_edit.setText(device)
        self.batch_jobs.setChecked(s.run_batch_jobs)

    def layers(self) -> tuple[int, int] | None:
        if not self.own_layers.isChecked():
            return None
        return self.layer_start.value(), self.layer_end.value()

    def tracker_url(self) -> str:
        return self.url_edit.text().strip() if self.own_tracker.isChecked() else ""
