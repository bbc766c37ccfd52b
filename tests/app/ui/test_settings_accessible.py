"""Every Settings field has an accessible name and a buddy label (a screen reader says
what it is; Alt+the label's letter reaches it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QLabel, QWidget

from app.ui.screens.settings.settings_dialog import SettingsDialog
from app.ui.settings_store import SettingsStore
from app.ui.widgets.settings_fields import INPUTS


def inner_part_of_an_input(widget: QWidget) -> bool:
    """A spin box's or combo box's own line edit, a list's viewport: not a field."""
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, INPUTS):
            return True
        parent = parent.parentWidget()
    return False


def test_every_settings_field_is_named_and_has_a_buddy(qtbot: Any, tmp_path: Path) -> None:
    store = SettingsStore(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    dialog = SettingsDialog(store, gpu_measurable=lambda: False)
    qtbot.addWidget(dialog)
    fields = [
        w
        for w in dialog.findChildren(QWidget)
        if isinstance(w, INPUTS) and not inner_part_of_an_input(w)
    ]
    assert len(fields) >= 10
    unnamed = [type(w).__name__ for w in fields if not w.accessibleName().strip()]
    assert unnamed == []
    buddies = {id(label.buddy()) for label in dialog.findChildren(QLabel) if label.buddy()}
    for name in (
        "device_field",
        "device_edit",
        "model_edit",
        "layer_end",
        "memory_cap",
        "token_edit",
    ):
        field = getattr(dialog, name)
        field = getattr(field, "combo", field)
        assert id(field) in buddies, name
    assert id(dialog.programs.list) in buddies
