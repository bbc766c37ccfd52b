"""The settings dialog and the QSettings store behind it (offscreen, dict keyring)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest
from keyring.backends import fail
from PySide6.QtCore import QSettings

from app.errors import TrackerReadError
from app.settings_model import AppSettings
from app.tracker_api import TrackerCheck
from app.ui.screens.settings.samples import SAMPLE_TABS
from app.ui.screens.settings.settings_dialog import SettingsDialog
from app.ui.settings_store import SettingsStore, default_qsettings
from core.network.join_tokens import load_join_token, save_join_token
from tests.core.keyring_backend import DictKeyring
from tests.tracker_service.server_process import TrackerProcess

URL = "http://tracker.test:8765"


@pytest.fixture
def store(tmp_path: Path) -> SettingsStore:
    return SettingsStore(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))


@pytest.fixture(autouse=True)
def dict_keyring() -> Iterator[DictKeyring]:
    previous = keyring.get_keyring()
    backend = DictKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


class FakeCheck:
    def __init__(self, error: str | None = None) -> None:
        self.error = error
        self.urls: list[str] = []

    def __call__(self, url: str) -> TrackerCheck:
        self.urls.append(url)
        if self.error:
            raise TrackerReadError(self.error, reason="connection-refused")
        return TrackerCheck(ok=True, sentence="Connected to a MeshNet tracker: 2 live nodes.")


class FakeAutostart:
    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.calls: list[tuple[bool, list[str]]] = []

    def __call__(self, enabled: bool, command: list[str]) -> None:
        if self.error:
            raise self.error
        self.calls.append((enabled, command))


def make_dialog(
    qtbot: Any, store: SettingsStore, check: Any = None, autostart: Any = None
) -> SettingsDialog:
    dialog = SettingsDialog(
        store, check=check or FakeCheck(), autostart=autostart or FakeAutostart()
    )
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


# -- the store --------------------------------------------------------------------


def test_the_store_keeps_every_field_and_announces_saves(store: SettingsStore, qtbot: Any) -> None:
    settings = AppSettings(
        tracker_url=URL,
        model="/models/x",
        layers=(3, 9),
        device="cuda:0",
        memory_cap_mb=4096,
        start_at_login=True,
        pause_when_gpu_busy=False,
        pause_above_gpu_temp_c=80,
        pause_programs=("eldenring.exe",),
        pause_on_battery=False,
        idle_minutes=5,
    )
    with qtbot.waitSignal(store.changed) as saved:
        store.save(settings)
    assert saved.args == [settings]
    again = SettingsStore(QSettings(store.location, QSettings.Format.IniFormat))
    assert again.load() == settings
    assert again.update(idle_minutes=None).idle_minutes is None
    assert again.load().layers == (3, 9)


def test_the_store_reads_garbage_as_defaults(store: SettingsStore, tmp_path: Path) -> None:
    raw = QSettings(store.location, QSettings.Format.IniFormat)
    raw.setValue("settings/memory_cap_mb", "lots")
    raw.setValue("settings/layers", "[5, 2]")
    raw.setValue("settings/tracker_url", '"' + URL + '"')
    raw.sync()
    loaded = SettingsStore(QSettings(store.location, QSettings.Format.IniFormat)).load()
    assert loaded == AppSettings(tracker_url=URL)


def test_the_default_store_follows_qsettings_set_path(tmp_path: Path) -> None:
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path))
    try:
        store = SettingsStore()
        store.save(AppSettings(tracker_url=URL))
        store.save_hardware({"device": {"kind": "cpu"}})
        assert Path(store.location).is_relative_to(tmp_path)
        assert Path(default_qsettings().fileName()).is_file()
        assert SettingsStore().last_hardware() == {"device": {"kind": "cpu"}}
    finally:
        QSettings.setDefaultFormat(QSettings.Format.NativeFormat)


# -- validation ---------------------------------------------------------------------


def test_fields_show_the_stored_settings(qtbot: Any, store: SettingsStore) -> None:
    store.save(AppSettings(tracker_url=URL, layers=(2, 7), pause_programs=("a.exe", "b.exe")))
    check = FakeCheck()
    dialog = make_dialog(qtbot, store, check)
    assert dialog.url_edit.text() == URL
    assert dialog.own_layers.isChecked() and dialog.layer_end.value() == 7
    assert dialog.programs.programs() == ("a.exe", "b.exe")
    assert dialog.current_settings() == store.load()
    dialog.on_battery.setChecked(False)  # the address is unchanged: saved without a check
    dialog.save()
    assert store.load().pause_on_battery is False and not dialog.isVisible()
    assert check.urls == []


def test_showing_the_dialog_again_shows_what_is_stored_now(
    qtbot: Any, store: SettingsStore
) -> None:
    dialog = make_dialog(qtbot, store)
    dialog.memory_cap.set_mb(100)  # left invalid, then closed without saving
    dialog.reject()
    store.update(tracker_url=URL, idle_minutes=15)  # saved elsewhere (the wizard)
    dialog.show()
    assert dialog.url_edit.text() == URL and dialog.idle.value() == 15
    assert dialog.memory_cap.value() == 0 and dialog.save_button.isEnabled()


@pytest.mark.parametrize(
    ("edit", "field", "words"),
    [
        (lambda d: d.url_edit.setText("ftp://x"), "tracker_url", "http://"),
        (lambda d: d.memory_cap.setValue(0.1), "memory_cap_mb", "at least 0.25 GB"),
        (
            lambda d: (d.gpu_hot.setChecked(True), d.gpu_temp.setValue(120)),
            "pause_above_gpu_temp_c",
            "120",
        ),
        (lambda d: (d.when_idle.setChecked(True), d.idle.setValue(0)), "idle_minutes", "idle"),
        (lambda d: d.device_edit.setText("gpu7"), "device", "gpu7"),
        (lambda d: (d.own_layers.setChecked(True), d.layer_start.setValue(4)), "layers", "empty"),
    ],
)
def test_an_invalid_value_gets_a_sentence_beside_it_and_blocks_save(
    qtbot: Any, store: SettingsStore, edit: Any, field: str, words: str
) -> None:
    dialog = make_dialog(qtbot, store)
    assert dialog.save_button.isEnabled()
    edit(dialog)
    label = dialog.problems[field]
    assert not label.isHidden() and words in label.text()
    assert not dialog.save_button.isEnabled()
    assert any(dialog.tabs.tabText(i).startswith("⚠") for i in range(dialog.tabs.count()))
    dialog.fill(AppSettings())
    assert dialog.save_button.isEnabled() and label.isHidden()


def test_a_program_with_a_folder_is_refused(qtbot: Any, store: SettingsStore) -> None:
    dialog = make_dialog(qtbot, store)
    dialog.programs.entry.setText("eldenring.exe")
    dialog.programs.add_button.click()
    assert dialog.current_settings().pause_programs == ("eldenring.exe",)
    dialog.programs.list.item(0).setText(r"C:\Games\eldenring.exe")
    assert "not a path" in dialog.problems["pause_programs"].text()
    assert not dialog.save_button.isEnabled()
    dialog.programs.list.item(0).setSelected(True)
    dialog.programs.remove_button.click()
    assert dialog.save_button.isEnabled()


def test_the_device_list_offers_the_gpu_the_doctor_found(qtbot: Any, store: SettingsStore) -> None:
    store.save_hardware({"device": {"kind": "cuda", "name": "NVIDIA GeForce RTX 4070"}})
    dialog = make_dialog(qtbot, store)
    labels = [
        dialog.device_field.combo.itemText(i) for i in range(dialog.device_field.combo.count())
    ]
    # the simple page names the card; the device string is the Advanced page's
    assert labels == ["Best available", "Processor (CPU)", "NVIDIA GeForce RTX 4070"]
    dialog.device_field.combo.setCurrentIndex(2)
    assert dialog.current_settings().device == "cuda:0"
    dialog.device_edit.setText("cuda:1")  # a second card, typed on the Advanced page
    assert dialog.current_settings().device == "cuda:1" and dialog.save_button.isEnabled()
    assert not dialog.device_field.combo.isEnabled() and "cuda:1" in dialog.device_field.hint.text()
    dialog.fill(AppSettings(device="cuda:1"))  # stored: it goes back to the Advanced page
    assert dialog.device_edit.text() == "cuda:1" and dialog.device_field.value() is None
    dialog.device_edit.clear()
    assert dialog.device_field.combo.isEnabled()
    assert dialog.current_settings().device is None


# -- saving ---------------------------------------------------------------------------


def test_save_checks_the_tracker_then_keeps_settings_token_and_autostart(
    qtbot: Any, store: SettingsStore, dict_keyring: DictKeyring
) -> None:
    check, autostart = FakeCheck(), FakeAutostart()
    dialog = make_dialog(qtbot, store, check, autostart)
    dialog.url_edit.setText(URL)
    dialog.token_edit.setText("secret-token")
    dialog.start_at_login.setChecked(True)
    dialog.memory_cap.setValue(2.0)  # GB, as the wizard says it
    with qtbot.waitSignal(dialog.accepted, timeout=10_000):
        dialog.save_button.click()
    assert check.urls == [URL]
    assert store.load() == AppSettings(tracker_url=URL, memory_cap_mb=2048, start_at_login=True)
    assert load_join_token(URL) == "secret-token"
    assert autostart.calls == [(True, [sys.executable, "-m", "app.ui.main", "--hidden"])]


def test_an_unreachable_tracker_is_said_beside_the_field_and_can_be_saved_anyway(
    qtbot: Any, store: SettingsStore
) -> None:
    check = FakeCheck(error="Nothing answers at http://tracker.test:8765: check the address.")
    dialog = make_dialog(qtbot, store, check)
    dialog.url_edit.setText(URL)
    dialog.save_button.click()
    qtbot.waitUntil(lambda: dialog.save_button.text() == "Save anyway", timeout=10_000)
    assert dialog.url_result.text() == check.error
    assert store.load() == AppSettings() and dialog.isVisible()
    with qtbot.waitSignal(dialog.accepted, timeout=10_000):
        dialog.save_button.click()
    assert store.load().tracker_url == URL and check.urls == [URL]


def test_check_shows_the_answer_and_a_checked_address_saves_at_once(
    qtbot: Any, store: SettingsStore
) -> None:
    check = FakeCheck()
    dialog = make_dialog(qtbot, store, check)
    dialog.url_edit.setText(URL)
    dialog.check_button.click()
    qtbot.waitUntil(lambda: dialog.url_result.text().startswith("✓"), timeout=10_000)
    assert "Connected to a MeshNet tracker" in dialog.url_result.text()
    dialog.save()
    assert store.load().tracker_url == URL and check.urls == [URL]


def test_the_join_token_is_loaded_masked_and_a_keyring_failure_is_said(
    qtbot: Any, store: SettingsStore
) -> None:
    save_join_token(URL, "old-token")
    store.save(AppSettings(tracker_url=URL))
    dialog = make_dialog(qtbot, store, FakeCheck())
    qtbot.waitUntil(lambda: dialog.token_edit.text() == "old-token", timeout=10_000)
    assert dialog.token_edit.echoMode() == dialog.token_edit.EchoMode.Password
    dialog.show_token.setChecked(True)
    assert dialog.token_edit.echoMode() == dialog.token_edit.EchoMode.Normal
    keyring.set_keyring(fail.Keyring())
    dialog.token_edit.setText("new-token")
    dialog.save_button.click()
    qtbot.waitUntil(lambda: dialog.problems["join_token"].isVisible(), timeout=10_000)
    assert "keyring" in dialog.problems["join_token"].text()
    assert dialog.isVisible() and dialog.tabs.currentIndex() == 2  # the token is Advanced


def test_start_at_login_writes_the_real_desktop_entry_or_says_why_not(
    qtbot: Any, store: SettingsStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.autostart import set_autostart
    from app.errors import AutostartError

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    dialog = SettingsDialog(
        store, check=FakeCheck(), autostart=lambda on, cmd: set_autostart(on, cmd, platform="linux")
    )
    qtbot.addWidget(dialog)
    dialog.start_at_login.setChecked(True)
    with qtbot.waitSignal(dialog.accepted, timeout=10_000):
        dialog.save()
    entry = tmp_path / "config" / "autostart" / "meshnet.desktop"
    assert "app.ui.main" in entry.read_text()
    broken = make_dialog(
        qtbot,
        store,
        FakeCheck(),
        FakeAutostart(AutostartError("Could not turn off start at login.")),
    )
    broken.start_at_login.setChecked(False)
    broken.save()
    qtbot.waitUntil(lambda: broken.problems["start_at_login"].isVisible(), timeout=10_000)
    assert broken.problems["start_at_login"].text() == "Could not turn off start at login."
    assert store.load().start_at_login is True


@pytest.mark.parametrize("name", SettingsDialog.SAMPLE_NAMES)
def test_show_sample_fills_each_tab_and_saves_nothing(
    qtbot: Any, store: SettingsStore, name: str
) -> None:
    check = FakeCheck()
    dialog = make_dialog(qtbot, store, check)
    dialog.show_sample(name)
    assert dialog.tabs.currentIndex() == SAMPLE_TABS[name]
    assert dialog.current_settings().pause_programs == ("eldenring.exe", "cyberpunk2077.exe")
    # "problems" shows fields to change, so Save waits for them
    assert dialog.save_button.isEnabled() == (name != "problems") and not dialog.grab().isNull()
    if name == "checked":  # the real check's sentence, against a canned tracker state
        assert (
            dialog.url_result.text() == "✓ Connected to a MeshNet tracker: 3 live nodes, 1 recipe."
        )
    if name == "problems":
        shown = {key for key, label in dialog.problems.items() if label.isVisibleTo(dialog)}
        assert shown == {"memory_cap_mb"}  # on the simple page, in GB
    dialog.reject()
    assert store.load() == AppSettings() and check.urls == []


@pytest.mark.slow
def test_check_against_a_real_tracker_and_a_port_where_nothing_answers(
    qtbot: Any, store: SettingsStore, tmp_path: Path
) -> None:
    tracker = TrackerProcess(tmp_path, f"sqlite:///{tmp_path / 'tracker.db'}").start()
    try:
        dialog = SettingsDialog(store)
        qtbot.addWidget(dialog)
        dialog.url_edit.setText(tracker.url)
        dialog.check_url()
        qtbot.waitUntil(lambda: dialog.url_result.text().startswith("✓"), timeout=20_000)
        assert "MeshNet tracker" in dialog.url_result.text()
    finally:
        tracker.stop()
    dialog.url_edit.setText(tracker.url)
    dialog.check_url()
    qtbot.waitUntil(lambda: "Nothing answers" in dialog.url_result.text(), timeout=20_000)


def test_run_batch_jobs_when_not_serving_is_a_saved_setting(
    qtbot: Any, store: SettingsStore
) -> None:
    dialog = make_dialog(qtbot, store, FakeCheck(), FakeAutostart())
    dialog.url_edit.setText(URL)
    assert not dialog.batch_jobs.isChecked()
    dialog.batch_jobs.setChecked(True)
    with qtbot.waitSignal(dialog.accepted, timeout=10_000):
        dialog.save_button.click()
    assert store.load() == AppSettings(tracker_url=URL, run_batch_jobs=True)


def test_the_leaderboard_name_and_team_can_be_changed_and_cleared_later(
    qtbot: Any, store: SettingsStore
) -> None:
    store.save(AppSettings(display_name="Ada", team="Analytical"))
    dialog = make_dialog(qtbot, store)
    fields = dialog.leaderboard
    assert fields.isVisibleTo(dialog) and fields.values() == ("Ada", "Analytical")
    fields.name_edit.setText("  Ada   Lovelace ")
    fields.team_edit.clear()
    with qtbot.waitSignal(dialog.accepted, timeout=10_000):
        dialog.save_button.click()
    assert store.load() == AppSettings(display_name="Ada Lovelace", team="")
