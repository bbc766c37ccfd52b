"""Small editors only the settings pages use: spin boxes, a row, the plain card choice,
and memory in GB (the wizard's unit) over the megabytes the settings keep."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QLocale
from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QHBoxLayout, QLabel, QSpinBox, QWidget

from app.texts import language, text

MB_PER_GB = 1024


def spin(low: int, high: int, suffix: str = "", special: str = "") -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    box.setSuffix(suffix)
    if special:
        box.setSpecialValueText(special)
    box.setMinimumWidth(110)
    return box


def row(*widgets: QWidget) -> QHBoxLayout:
    line = QHBoxLayout()
    for widget in widgets:
        line.addWidget(widget)
    line.addStretch(1)
    return line


class GigabyteSpin(QDoubleSpinBox):
    """Memory in GB (0: no limit); ``mb()`` is what the settings keep. A value shown as
    it was filled gives back the megabytes it was filled with (no rounding drift)."""

    def __init__(self) -> None:
        super().__init__()
        self.setDecimals(1)
        self.setRange(0.0, 4096.0)
        self.setSingleStep(0.5)
        self.setSuffix(text("settings.memory.unit"))
        self.setSpecialValueText(text("settings.memory.none"))
        self.setMinimumWidth(110)
        self.setLocale(QLocale(language()))  # "8,0 GB" in German, as the wizard writes it
        self._filled: tuple[float, int | None] = (0.0, None)

    def set_mb(self, megabytes: int | None) -> None:
        shown = round((megabytes or 0) / MB_PER_GB, 1)
        self._filled = (shown, megabytes)
        self.setValue(shown)

    def mb(self) -> int | None:
        shown, filled = self._filled
        if self.value() == shown and filled:
            return filled
        return round(self.value() * MB_PER_GB) or None


def _card_choices(hardware: dict[str, Any] | None) -> list[tuple[str, str | None]]:
    choices: list[tuple[str, str | None]] = [
        (text("settings.device.best"), None),
        (text("settings.device.cpu"), "cpu"),
    ]
    device = (hardware or {}).get("device") or {}
    kind = device.get("kind")
    if kind == "cuda":
        name = device.get("name") or text("settings.device.nvidia")
        choices.append((name, f"cuda:{device.get('index', 0)}"))
    elif kind == "mps":
        choices.append((device.get("name") or text("settings.device.apple"), "mps"))
    return choices


class CardChoice:
    """Which part of this computer does the work, by name: the best found, the processor,
    or the graphics card the check found. Device strings are the Advanced page's."""

    def __init__(self, hardware: dict[str, Any] | None) -> None:
        self.combo = QComboBox()
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        self.set_hardware(hardware)

    def set_hardware(self, hardware: dict[str, Any] | None) -> None:
        current = self.value() if self.combo.count() else None
        self.combo.clear()
        for label, value in _card_choices(hardware):
            self.combo.addItem(label, value)
        found = self.combo.count() > 2
        self.found_hint = text("settings.card.found" if found else "settings.card.none")
        self.hint.setText(self.found_hint)
        self.set_value(current)

    def value(self) -> str | None:
        data = self.combo.currentData()
        return data if isinstance(data, str) else None

    def has(self, device: str | None) -> bool:
        return any(self.combo.itemData(i) == device for i in range(self.combo.count()))

    def set_value(self, device: str | None) -> None:
        for index in range(self.combo.count()):
            if self.combo.itemData(index) == device:
                self.combo.setCurrentIndex(index)
                return
        self.combo.setCurrentIndex(0)
