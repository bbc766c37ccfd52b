"""The main path as rendered: plain words (English and German), accessible, keyboard-only,
and readable in a dark palette (issue 22).

``render_all`` is what ``meshnet-app --screenshot DIR`` runs; its texts.json lists every
string each screen shows, marked main path or Details.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QLabel,
    QLineEdit,
    QWidget,
    QWizard,
)

from app.network_join import Preview
from app.texts import TEXTS, forbidden_words_in
from app.ui.actions import AppActions
from app.ui.controller import NodeController
from app.ui.i18n import install_language
from app.ui.screens.doctor.join import JoinPage
from app.ui.screens.doctor.samples import SAMPLE_JOINED, SAMPLE_LINK, SAMPLE_NETWORK
from app.ui.screens.doctor.wizard import DoctorWizard
from app.ui.screens.recipes_view import sample_rows
from app.ui.screens.status.window import StatusWindow
from app.ui.screenshots import (
    SAMPLE_CREDIT,
    SAMPLE_LOG,
    SampleUsage,
    pull_refused_events,
    refused_events,
    render_all,
    serving_events,
)
from app.ui.settings_store import SettingsStore
from tests.app.ui.screens.test_doctor_wizard import FakeController, FakeNode


@pytest.fixture
def german() -> Iterator[None]:
    app = QApplication.instance()
    assert app is not None
    assert install_language(app, "de") == "de"
    try:
        yield
    finally:
        install_language(app, "en")


def rendered(folder: Path) -> list[dict[str, Any]]:
    app = QApplication.instance()
    assert render_all(folder, app) == 0  # type: ignore[arg-type]
    screens: list[dict[str, Any]] = json.loads((folder / "texts.json").read_text("utf-8"))
    return screens


def engineering_words(screens: list[dict[str, Any]]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for screen in screens:
        if screen["main_path"]:
            words = [w for text in screen["texts"] for w in forbidden_words_in(text)]
            if words:
                found[screen["screen"]] = words
    return found


def test_texts_json_lists_every_screen_and_the_main_path_is_plain(
    qtbot: Any, tmp_path: Path
) -> None:
    screens = rendered(tmp_path)
    by_name = {screen["screen"]: screen for screen in screens}
    assert {"status-serving", "tray-menu", "wizard-memory", "serves-default"} <= set(by_name)
    assert (
        not by_name["status-details"]["main_path"] and not by_name["recipes-default"]["main_path"]
    )
    assert engineering_words(screens) == {}
    # the Details view keeps the engineer's words: the scan is not blind
    assert (
        "admission"
        in engineering_words([{**by_name["status-details"], "main_path": True}])["status-details"]
    )
    # Settings' simple pages are on the main path (the tray opens them); Advanced is marked
    assert by_name["settings-computer"]["main_path"] and by_name["settings-pause"]["main_path"]
    assert by_name["settings-advanced"]["marked"] == "Advanced"
    assert by_name["status-details"]["marked"] == "Details"
    simple = by_name["settings-computer"]["texts"]
    assert "Graphics card:" in simple and "Memory limit:" in simple and "Advanced" in simple
    advanced_words = engineering_words([{**by_name["settings-advanced"], "main_path": True}])
    assert "layers" in advanced_words["settings-advanced"]  # the scan reads Settings too
    serving = by_name["status-serving"]["texts"]
    assert "Contributing" in serving and "Details" in serving
    assert "words written today" in serving and "Network: Riverside Makers" in serving
    assert "MeshNet — contributing: helping answer questions" in by_name["tray-menu"]["texts"]
    # the tray's notifications, as the real tray is told them, are read like a screen
    notified = by_name["tray-notifications"]
    assert notified["main_path"]
    assert {
        "Contributing",
        "This computer is helping the network answer questions.",
        "Contribution paused",
        "Contributing again",
        "Not accepted",
        "Contribution stopped",
        "Ready to answer",
    } <= set(notified["texts"])


def test_the_german_screens_speak_german(qtbot: Any, tmp_path: Path, german: None) -> None:
    screens = rendered(tmp_path)
    assert engineering_words(screens) == {}
    by_name = {screen["screen"]: screen["texts"] for screen in screens}
    assert "Hilft mit" in by_name["status-serving"]
    assert "Wörter heute geschrieben" in by_name["status-serving"]
    assert "Einem Netzwerk beitreten" in by_name["wizard-join"]
    assert any(t.startswith("Die Hälfte meines Grafikspeichers") for t in by_name["wizard-memory"])
    assert "Bestanden: Dieser Computer kann mithelfen." in by_name["wizard-result-passed"]
    assert "Was dieses Netzwerk anbietet" in by_name["serves-default"]
    assert "Mithelfen" in by_name["tray-menu"]
    assert "Mithelfen pausiert" in by_name["tray-notifications"]
    # Qt's own buttons follow: the wizard's Next is German too
    assert "Weiter >" in by_name["wizard-memory"]
    # no English sentence of the catalogue is left on a main-path screen
    english = {s.replace("&", "") for s in TEXTS.values() if len(s) > 14 and "{" not in s}
    left = {
        screen["screen"]: sorted(english & set(screen["texts"]))
        for screen in screens
        if screen["main_path"] and english & set(screen["texts"])
    }
    assert left == {}


# English words no German sentence uses: one of them in a German screen is a string
# that skipped the translation system (settings, Details and recipes included)
ENGLISH_ONLY = re.compile(r"\b(the|this|your|with|while|when|not|and|of|to|is)\b", re.I)


def sample_data() -> set[str]:
    """What the samples feed in as data: the node's own messages and log lines (the
    Details view shows them as the node said them) and the network's description."""
    events = serving_events(time.time()) + refused_events(time.time())
    rows = [row.detail for row in sample_rows()]
    found = {event["message"] for event in events} | set(SAMPLE_LOG) | set(rows)
    # the network's own description; the Hub's refusal, as the node child said it
    found |= {SAMPLE_NETWORK.description}
    found |= {event["message"] for event in pull_refused_events("Qwen/Qwen2.5-0.5B-Instruckt")}
    return {message for message in found if message}


def test_every_screen_in_german_has_no_english_left(
    qtbot: Any, tmp_path: Path, german: None
) -> None:
    data = sample_data()
    left = {}
    for screen in rendered(tmp_path):
        english = [
            t for t in screen["texts"] if ENGLISH_ONLY.search(t) and not any(d in t for d in data)
        ]
        if english:
            left[screen["screen"]] = english
    assert left == {}


def status_window(qtbot: Any, events: list[dict[str, Any]]) -> StatusWindow:
    controller = NodeController(argv_factory=lambda _r: ["true"])
    for event in events:
        controller.handle_event(event)
    # the sample's credit, asked of no tracker: a pool thread resolving the sample's
    # address outlived its window and crashed the run in garbage collection
    window = StatusWindow(
        controller,
        AppActions(controller),
        usage=SampleUsage(),
        credit_fetch=lambda _tracker, _node: SAMPLE_CREDIT,
    )
    qtbot.addWidget(window)
    window.show()
    return window


def unnamed_controls(root: QWidget) -> list[str]:
    """Visible controls a screen reader could not name, and labels with a shortcut but no
    field to give it to."""
    problems = []
    for widget in root.findChildren(QWidget):
        if not widget.isVisibleTo(root):
            continue
        if isinstance(widget, QAbstractButton) and not (widget.accessibleName() or widget.text()):
            problems.append(f"button {widget.objectName() or widget!r}")
        if isinstance(widget, QLineEdit) and not widget.accessibleName():
            problems.append(f"field {widget.placeholderText()!r}")
        shortcut = isinstance(widget, QLabel) and "&" in widget.text().replace("&&", "")
        if shortcut and "<" not in widget.text() and widget.buddy() is None:  # type: ignore[attr-defined]
            problems.append(f"label {widget.text()!r} has no buddy")
    return problems


def test_every_control_has_a_name_and_every_shortcut_label_a_field(
    qtbot: Any, tmp_path: Path
) -> None:
    for events in ([], serving_events(time.time()), refused_events(time.time())):
        window = status_window(qtbot, events)
        assert unnamed_controls(window) == []
        assert window.state_icon.accessibleName() == window.headline_label.text()
        window.show_details()
        row = window.details.gate_rows["admission"][0]
        assert row.accessibleName().startswith("Admission: ")  # the gate icons speak
    store = SettingsStore(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    wizard = DoctorWizard(store, FakeController())
    qtbot.addWidget(wizard)
    for name in DoctorWizard.SAMPLE_NAMES:
        wizard.show_sample(name)
        wizard.show()
        assert unnamed_controls(wizard) == [], name


def test_a_dark_palette_keeps_the_banner_dark_and_the_words_light(qtbot: Any) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    before = app.palette()
    dark = QPalette()
    for role, colour in (
        (QPalette.ColorRole.Window, "#202124"),
        (QPalette.ColorRole.WindowText, "#e8eaed"),
        (QPalette.ColorRole.Base, "#1b1b1d"),
        (QPalette.ColorRole.AlternateBase, "#2a2b2e"),
        (QPalette.ColorRole.Text, "#e8eaed"),
        (QPalette.ColorRole.Button, "#303134"),
        (QPalette.ColorRole.ButtonText, "#e8eaed"),
    ):
        dark.setColor(role, QColor(colour))
    app.setPalette(dark)
    try:
        for events in (serving_events(time.time()), refused_events(time.time())):
            window = status_window(qtbot, events)
            image = window.banner.grab().toImage()
            # a pale fixed colour (the old #e8f6ee) would make this light
            inside = image.pixelColor(image.width() // 2, image.height() - 6)
            assert inside.lightness() < 90, inside.name()
            assert (
                window.headline_label.palette().color(QPalette.ColorRole.WindowText).lightness()
                > 180
            )
    finally:
        app.setPalette(before)


def test_the_wizard_and_the_status_window_work_from_the_keyboard_alone(
    qtbot: Any, tmp_path: Path
) -> None:
    """Paste the invite, Enter, Space on Join, then Alt+N, Enter on Finish; no mouse."""
    fake = FakeNode(tmp_path)
    store = SettingsStore(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    joined: list[str] = []

    def join(link: str) -> Any:
        joined.append(link)
        return SAMPLE_JOINED

    page = JoinPage(
        preview=lambda link: Preview(link, SAMPLE_NETWORK), join=join, joined_now=lambda: None
    )
    controller = FakeController()
    wizard = DoctorWizard(store, controller, node_command=fake.command, join_page=page)
    qtbot.addWidget(wizard)
    wizard.show()
    qtbot.waitExposed(wizard)
    wizard.activateWindow()
    assert page.link_edit.hasFocus() or page.link_edit.setFocus() is None
    QTest.keyClicks(page.link_edit, SAMPLE_LINK)
    QTest.keyClick(page.link_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(
        lambda: page.network_box.isVisible() and page.join_button.hasFocus(), timeout=10_000
    )
    QTest.keyClick(page.join_button, Qt.Key.Key_Space)
    # joined: the checks run by themselves, up to the one choice (how much memory)
    qtbot.waitUntil(lambda: wizard.currentId() == DoctorWizard.PAGE_MEMORY, timeout=30_000)
    assert joined == [SAMPLE_LINK]
    memory = wizard.memory
    memory.buttons["half"].setFocus()
    QTest.keyClick(memory.buttons["half"], Qt.Key.Key_Up)  # arrows move between the choices
    assert memory.choice() == "little"
    QTest.keyClick(memory.buttons["little"], Qt.Key.Key_Down)
    assert memory.choice() == "half"
    QTest.keyClick(wizard, Qt.Key.Key_N, Qt.KeyboardModifier.AltModifier)  # Next
    qtbot.waitUntil(lambda: wizard.currentId() == DoctorWizard.PAGE_RESULT, timeout=30_000)
    assert wizard.result_page.passed and wizard.result_page.contribute.isChecked()
    finish = wizard.button(QWizard.WizardButton.FinishButton)
    finish.setFocus()
    QTest.keyClick(finish, Qt.Key.Key_Space)
    assert controller.started == ["/tmp/report.json"]
    assert [call[0] for call in fake.calls()] == ["hardware", "models", "doctor"]

    window = status_window(qtbot, serving_events(time.time()))
    window.contribute_button.setFocus()
    for _ in range(12):  # Tab walks the main view's controls up to Details
        if window.focusWidget() is window.details_button:
            break
        QTest.keyClick(window.focusWidget(), Qt.Key.Key_Tab)
    assert window.focusWidget() is window.details_button
    QTest.keyClick(window.details_button, Qt.Key.Key_Space)
    assert window.showing_details and window.focusWidget() is window.details.back_button
    QTest.keyClick(window.details.back_button, Qt.Key.Key_Space)
    assert not window.showing_details and window.focusWidget() is window.details_button
