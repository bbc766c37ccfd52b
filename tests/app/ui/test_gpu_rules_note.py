"""Where the graphics card cannot be read (AMD, Intel, most laptops: no NVML), the
graphics-card pause rules would silently never fire; Settings says so beside them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings

from app.probes.gpu import NvmlGpuProbe
from app.texts import text
from app.ui.screens.settings.settings_dialog import SettingsDialog
from app.ui.settings_store import SettingsStore
from tests.app.fake_nvml import FakeGpu, FakeNvml


def dialog(qtbot: Any, tmp_path: Path, measurable: bool) -> SettingsDialog:
    store = SettingsStore(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    made = SettingsDialog(store, gpu_measurable=lambda: measurable)
    qtbot.addWidget(made)
    made.show()
    return made


def test_an_unreadable_card_is_said_beside_its_rules(qtbot: Any, tmp_path: Path) -> None:
    shown = dialog(qtbot, tmp_path, measurable=False)
    assert not shown.gpu_note.isHidden()  # on the Pause tab, beside the rules
    assert shown.gpu_note.text() == text("settings.gpu.unmeasured")
    assert "programs" in shown.gpu_note.text()  # and what to use instead


def test_a_readable_card_needs_no_note(qtbot: Any, tmp_path: Path) -> None:
    shown = dialog(qtbot, tmp_path, measurable=True)
    assert shown.gpu_note.isHidden()


def test_the_probe_says_whether_a_card_can_be_read() -> None:
    assert NvmlGpuProbe(importer=lambda: FakeNvml([FakeGpu()])).available()  # type: ignore[arg-type, return-value]
    assert not NvmlGpuProbe(importer=lambda: FakeNvml([])).available()  # type: ignore[arg-type, return-value]

    def no_library() -> Any:
        raise ImportError("No module named 'pynvml'")

    assert not NvmlGpuProbe(importer=no_library).available()
