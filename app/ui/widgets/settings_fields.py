"""Small editors the settings dialog is made of (app/ui/screens/settings/settings_dialog.py).

Kept apart so the dialog file reads as the flow (fill, validate, check, save)
and these as plain widgets a test can drive on their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.texts import text

# Status colours: a dark and a light shade of each hue; the one readable on the
# palette's window colour (WCAG AA, 4.5:1) is used, so a dark palette stays legible.
ERROR_SHADES = ("#b3261e", "#ff8a80")
OK_SHADES = ("#1e7b34", "#7ee2a0")
AA_CONTRAST = 4.5


def _luminance(colour: QColor) -> float:
    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    red, green, blue = (channel(c) for c in (colour.redF(), colour.greenF(), colour.blueF()))
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(first: QColor, second: QColor) -> float:
    """The WCAG contrast ratio of two colours (1 to 21)."""
    light, dark = sorted((_luminance(first), _luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def status_colour(shades: tuple[str, str], background: QColor | None = None) -> QColor:
    """The shade of a status hue that reads best on ``background`` (the palette's window)."""
    if background is None:
        background = QApplication.palette().color(QPalette.ColorRole.Window)
    return max((QColor(shade) for shade in shades), key=lambda c: contrast(c, background))


def error_style() -> str:
    return f"color: {status_colour(ERROR_SHADES).name()};"


def ok_style() -> str:
    return f"color: {status_colour(OK_SHADES).name()};"


Cell = QWidget | QLayout


def problem_label() -> QLabel:
    """A red sentence under a field, hidden while there is nothing to say."""
    label = QLabel()
    label.setWordWrap(True)
    label.setStyleSheet(error_style())
    label.setVisible(False)
    return label


INPUTS = (QLineEdit, QAbstractSpinBox, QComboBox, QAbstractItemView, QPlainTextEdit)


def first_input(cells: Sequence[Cell]) -> QWidget | None:
    """The first field a user types or picks in, in ``cells`` (layouts and composites
    searched in order); None for a row of check boxes and sentences only."""
    for cell in cells:
        if isinstance(cell, QLayout):
            items = [item for i in range(cell.count()) if (item := cell.itemAt(i)) is not None]
            found = first_input([x for i in items for x in (i.widget(), i.layout()) if x])
        elif isinstance(cell, INPUTS):
            found = cell
        else:
            inner = [w for w in cell.findChildren(QWidget) if isinstance(w, INPUTS)]
            found = inner[0] if inner else None
        if found is not None:
            return found
    return None


def form_page(rows: Sequence[tuple[str, Sequence[Cell]]]) -> QWidget:
    """A form whose rows stack a field with the sentences that belong beside it.

    Each row's title is the buddy label of the row's first field (Alt+its letter
    and a screen reader both find the field by it), and names the field for a
    screen reader unless the field has a name of its own."""
    page = QWidget()
    form = QFormLayout(page)
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    for label, cells in rows:
        stack = QVBoxLayout()
        stack.setContentsMargins(0, 0, 0, 0)
        stack.setSpacing(3)
        for cell in cells:
            if isinstance(cell, QLayout):
                stack.addLayout(cell)
            else:
                stack.addWidget(cell)
        title = QLabel(label)
        field = first_input(cells) if label else None
        if field is not None:
            title.setBuddy(field)
            if not field.accessibleName():
                field.setAccessibleName(label.rstrip(":： ").replace("&", ""))
        form.addRow(title, stack)
    return page


def _device_choices(hardware: dict[str, Any] | None) -> list[tuple[str, str | None]]:
    choices: list[tuple[str, str | None]] = [
        (text("settings.device.best"), None),
        (text("settings.device.cpu"), "cpu"),
    ]
    device = (hardware or {}).get("device") or {}
    kind = device.get("kind")
    if kind == "cuda":
        value = f"cuda:{device.get('index', 0)}"
        choices.append((f"{device.get('name') or text('settings.device.nvidia')} ({value})", value))
    elif kind == "mps":
        choices.append((f"{device.get('name') or text('settings.device.apple')} (mps)", "mps"))
    return choices


class DeviceField:
    """Which device runs the layers: the best found, the CPU, a GPU the doctor saw, or typed."""

    def __init__(self, hardware: dict[str, Any] | None) -> None:
        self.combo = QComboBox()
        self.combo.setEditable(True)
        self.combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        self.set_hardware(hardware)

    def set_hardware(self, hardware: dict[str, Any] | None) -> None:
        current = self.value() if self.combo.count() else None
        self.combo.clear()
        for label, value in _device_choices(hardware):
            self.combo.addItem(label, value)
        found = self.combo.count() > 2
        self.hint.setText(text("settings.device.found") if found else text("settings.device.none"))
        self.set_value(current)

    def value(self) -> str | None:
        text = self.combo.currentText().strip()
        for index in range(self.combo.count()):
            if self.combo.itemText(index) == text:
                data = self.combo.itemData(index)
                return data if isinstance(data, str) else None
        return text or None

    def set_value(self, device: str | None) -> None:
        for index in range(self.combo.count()):
            if self.combo.itemData(index) == device:
                self.combo.setCurrentIndex(index)
                return
        self.combo.setEditText(device or "")


class ProgramsField(QWidget):
    """An editable list of program file names (double-click a name to change it)."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.list = QListWidget()
        self.list.setFixedHeight(90)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.entry = QLineEdit()
        self.entry.setPlaceholderText(text("settings.programs.hint"))
        self.entry.setAccessibleName(text("settings.programs.name"))
        self.list.setAccessibleName(text("settings.programs.list.name"))
        self.add_button = QPushButton(text("settings.programs.add"))
        self.remove_button = QPushButton(text("settings.programs.remove"))
        self.add_button.clicked.connect(self.add_from_entry)
        self.entry.returnPressed.connect(self.add_from_entry)
        self.remove_button.clicked.connect(self.remove_selected)
        self.list.itemChanged.connect(lambda _item: self.changed.emit())
        row = QHBoxLayout()
        row.addWidget(self.entry, 1)
        row.addWidget(self.add_button)
        row.addWidget(self.remove_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.list)
        layout.addLayout(row)

    def programs(self) -> tuple[str, ...]:
        return tuple(self.list.item(i).text().strip() for i in range(self.list.count()))

    def set_programs(self, names: Sequence[str]) -> None:
        self.list.clear()
        for name in names:
            self._append(name)
        self.changed.emit()

    def add_from_entry(self) -> None:
        name = self.entry.text().strip()
        if name and name not in self.programs():
            self._append(name)
            self.changed.emit()
        self.entry.clear()

    def remove_selected(self) -> None:
        for item in self.list.selectedItems():
            self.list.takeItem(self.list.row(item))
        self.changed.emit()

    def _append(self, name: str) -> None:
        item = QListWidgetItem(name)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
        self.list.addItem(item)
