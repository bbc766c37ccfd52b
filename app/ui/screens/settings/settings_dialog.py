"""Settings: a simple part (this computer's graphics card and memory, start at login,
the pause rules) and an Advanced part (model, layers, a device string, batch jobs, a
tracker of one's own and its join token), one page each (issue 37):
``computer_page.py``, ``pause_page.py``, ``advanced_page.py``.

Every field is checked as it changes (``validate_settings``); a bad value gets
its sentence right beside it, the tab holding it is marked, and Save stays
disabled until it is fixed. The tracker address is checked with a real request
(``check_tracker``, in the background): on the Check button, and on Save when
the address was changed and not checked yet (changing only a pause rule while
offline needs no tracker); an address that does not answer can still be saved
on purpose ("Save anyway"). The join token goes to the OS keyring (or the app's
owner-only file), never into the settings file. The model is the packaged
default, a folder chosen on disk, or one downloaded from Hugging Face
(``hub_download``).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from dataclasses import replace

from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.autostart import set_autostart
from app.errors import AutostartError, TrackerReadError
from app.network_join import joined_network
from app.node_command import is_frozen
from app.probes.gpu import gpu_rules_measurable
from app.settings_model import AppSettings, validate_settings
from app.texts import text
from app.tracker_api import TrackerCheck, check_tracker
from app.ui.screens.settings.advanced_page import AdvancedPage
from app.ui.screens.settings.computer_page import ComputerPage
from app.ui.screens.settings.hub_download import HubDownloadDialog
from app.ui.screens.settings.pause_page import PausePage
from app.ui.settings_store import SettingsStore
from app.ui.tasks import BackgroundTask, run_in_background
from app.ui.widgets.settings_fields import error_style, ok_style, problem_label
from core.errors import MeshnetError
from core.network.join_tokens import load_join_token, save_join_token
from core.network.joined_network import JoinedNetwork

log = logging.getLogger(__name__)

CheckTracker = Callable[[str], TrackerCheck]
SetAutostart = Callable[[bool, list[str]], None]
COMPUTER_TAB, PAUSE_TAB, ADVANCED_TAB = 0, 1, 2
# which fields each tab holds, to mark a tab with a problem
TAB_FIELDS = (
    ("settings.tab.computer", {"memory_cap_mb", "start_at_login"}),
    ("settings.tab.pause", {"pause_above_gpu_temp_c", "pause_programs", "idle_minutes"}),
    ("settings.tab.advanced", {"tracker_url", "join_token", "device", "model", "layers"}),
)


def app_command() -> list[str]:
    """The command that starts this app at login: in the tray, without opening a window."""
    if is_frozen():
        return [sys.executable, "--hidden"]
    return [sys.executable, "-m", "app.ui.main", "--hidden"]


class SettingsDialog(QDialog):
    """The settings window. ``show_sample(name)`` fills a tab for screenshots."""

    # "checked": a tracker check's answer (Advanced); "problems": a field to change
    SAMPLE_NAMES = ("computer", "pause", "advanced", "checked", "problems")
    FIELDS = (
        "tracker_url",
        "join_token",
        "device",
        "model",
        "layers",
        "memory_cap_mb",
        "start_at_login",
        "pause_above_gpu_temp_c",
        "pause_programs",
        "idle_minutes",
    )

    def __init__(
        self,
        store: SettingsStore,
        parent: QWidget | None = None,
        *,
        check: CheckTracker = check_tracker,
        autostart: SetAutostart = set_autostart,
        gpu_measurable: Callable[[], bool] | None = None,
    ) -> None:
        super().__init__(parent)
        self.store = store
        self._gpu_measurable = gpu_measurable or gpu_rules_measurable
        self._check = check
        self._autostart = autostart
        self._checked: dict[str, bool] = {}  # address -> answered as a MeshNet tracker
        self._check_task: BackgroundTask | None = None
        self._checking_url: str | None = None
        self._save_after_check = False
        self._save_anyway = False
        self._token_loaded: str | None = None
        self.hub_download: HubDownloadDialog | None = None  # made on first use
        self.setWindowTitle(text("settings.title"))
        self.problems: dict[str, QLabel] = {name: problem_label() for name in self.FIELDS}
        self.tabs = QTabWidget()
        self.computer = ComputerPage(store.last_hardware(), self.problems)
        self.pause = PausePage(self.problems)
        self.advanced = AdvancedPage(self.problems)
        for key, page in (
            ("settings.tab.computer", self.computer),
            ("settings.tab.pause", self.pause),
            ("settings.tab.advanced", self.advanced),
        ):
            self.tabs.addTab(page, text(key))
        self._name_fields()
        self._connect()
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.save_button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        layout.addWidget(self.buttons)
        self.resize(640, 560)
        self._sample = False
        self.original = store.load()
        self.reload()

    def _name_fields(self) -> None:
        """The pages' fields, by the names the flow and its tests use."""
        computer, pause, advanced = self.computer, self.pause, self.advanced
        self.network_label = computer.network_label
        self.device_field, self.memory_cap = computer.device_field, computer.memory_cap
        self.start_at_login, self.leaderboard = computer.start_at_login, computer.leaderboard
        self.gpu_busy, self.gpu_hot, self.gpu_temp = pause.gpu_busy, pause.gpu_hot, pause.gpu_temp
        self.gpu_note, self.programs, self.on_battery = (
            pause.gpu_note,
            pause.programs,
            pause.on_battery,
        )
        self.when_idle, self.idle = pause.when_idle, pause.idle
        self.model_edit, self.download_button = advanced.model_edit, advanced.download_button
        self.own_layers = advanced.own_layers
        self.layer_start, self.layer_end = advanced.layer_start, advanced.layer_end
        self.device_edit, self.batch_jobs = advanced.device_edit, advanced.batch_jobs
        self.own_tracker, self.own_tracker_box = advanced.own_tracker, advanced.own_tracker_box
        self.url_edit, self.check_button = advanced.url_edit, advanced.check_button
        self.url_result, self.token_edit = advanced.url_result, advanced.token_edit
        self.show_token = advanced.show_token

    def _connect(self) -> None:
        self.advanced.browse_button.clicked.connect(self._choose_model_folder)
        self.download_button.clicked.connect(self.open_hub_download)
        self.check_button.clicked.connect(self.check_url)
        self.own_tracker.toggled.connect(self._own_tracker_toggled)
        self.url_edit.textChanged.connect(self._url_edited)
        self.device_edit.textChanged.connect(self._device_edited)
        for edit in (self.token_edit, self.model_edit):
            edit.textChanged.connect(self.validate)
        self.device_field.combo.currentIndexChanged.connect(self.validate)
        for box in (
            self.own_layers,
            self.gpu_busy,
            self.gpu_hot,
            self.on_battery,
            self.when_idle,
        ):
            box.toggled.connect(self.validate)
        for spin in (self.layer_start, self.layer_end, self.gpu_temp, self.idle):
            spin.valueChanged.connect(self.validate)
        self.memory_cap.valueChanged.connect(self.validate)
        self.programs.changed.connect(self.validate)

    def reload(self) -> None:
        """Show what is stored now (the app keeps this dialog and shows it again)."""
        self.original = self.store.load()
        self._save_after_check = self._save_anyway = False
        self.save_button.setText(text("settings.save"))
        self.url_result.setVisible(False)
        self.problems["join_token"].setVisible(False)
        self.problems["start_at_login"].setVisible(False)
        self.device_field.set_hardware(self.store.last_hardware())
        self.fill(self.original)
        self.show_network(joined_network())
        self.show_gpu_measurable(self._gpu_measurable())
        self._token_loaded = None
        self.token_edit.clear()
        self._load_token(self.original.tracker_url)

    def showEvent(self, event: QShowEvent) -> None:
        if not self._sample and not event.spontaneous():
            self.reload()
        super().showEvent(event)

    # -- values -----------------------------------------------------------------

    def fill(self, s: AppSettings) -> None:
        """Show ``s`` in the fields; a device the card choice cannot name goes to Advanced."""
        advanced_device = "" if self.device_field.has(s.device) else (s.device or "")
        self.computer.fill(s, bool(advanced_device))
        self.pause.fill(s)
        self.advanced.fill(s, advanced_device)
        self.computer.follow_advanced_device(advanced_device)
        self.validate()

    def current_settings(self) -> AppSettings:
        """The settings as the fields show them now (valid or not)."""
        model = self.model_edit.text().strip()
        display_name, team = self.leaderboard.values()
        return replace(
            self.original,
            tracker_url=self.advanced.tracker_url(),
            model=model or None,
            layers=self.advanced.layers(),
            device=self.device_edit.text().strip() or self.device_field.value(),
            memory_cap_mb=self.memory_cap.mb(),
            start_at_login=self.start_at_login.isChecked(),
            run_batch_jobs=self.batch_jobs.isChecked(),
            pause_when_gpu_busy=self.gpu_busy.isChecked(),
            pause_above_gpu_temp_c=self.gpu_temp.value() if self.gpu_hot.isChecked() else None,
            pause_programs=self.programs.programs(),
            pause_on_battery=self.on_battery.isChecked(),
            idle_minutes=self.idle.value() if self.when_idle.isChecked() else None,
            display_name=display_name,
            team=team,
        )

    def validate(self) -> dict[str, str]:
        """Show each field's problem beside it; Save only while there is none."""
        problems = validate_settings(self.current_settings())
        for name, label in self.problems.items():
            if name in ("join_token", "start_at_login"):
                continue  # set by a failed save, cleared when the field changes
            label.setText(problems.get(name, ""))
            label.setVisible(name in problems)
        for index, (key, names) in enumerate(TAB_FIELDS):
            title = text(key)
            self.tabs.setTabText(index, f"⚠ {title}" if names & problems.keys() else title)
        self.save_button.setEnabled(not problems and self._checking_url is None)
        return problems

    def _own_tracker_toggled(self, on: bool) -> None:
        self.own_tracker_box.setVisible(on)
        self.validate()

    def _device_edited(self, device: str) -> None:
        self.computer.follow_advanced_device(device.strip())
        self.validate()

    def show_gpu_measurable(self, measurable: bool) -> None:
        """Say beside the graphics-card rules when this card cannot be read."""
        self.pause.show_gpu_measurable(measurable)

    def show_network(self, joined: JoinedNetwork | None) -> None:
        """Say which network this computer belongs to (the wizard's join page changes it)."""
        self.computer.show_network(joined)

    # -- the tracker check --------------------------------------------------------

    def _url_edited(self) -> None:
        if self.url_edit.text().strip():
            self.own_tracker.setChecked(True)  # an address of one's own is the Advanced choice
        self._save_anyway = False
        self.save_button.setText(text("settings.save"))
        self.url_result.setVisible(False)
        self.validate()

    def check_url(self) -> None:
        """Ask the tracker in the background; the answer appears beside the field."""
        url = self.url_edit.text().strip()
        if "tracker_url" in self.validate():
            return
        if self._check_task is not None:
            self._check_task.discard()
        self._checking_url = url
        self.check_button.setEnabled(False)
        self.save_button.setEnabled(False)
        self._show_url_result(text("settings.checking", url=url), None)
        check = self._check
        self._check_task = run_in_background(
            lambda: check(url),
            on_success=lambda result: self._checked_url(url, result, None),
            on_failure=lambda error: self._checked_url(url, None, error),
            parent=self,
        )

    def _checked_url(self, url: str, result: object, error: BaseException | None) -> None:
        self._check_task = None
        self._checking_url = None
        self.check_button.setEnabled(True)
        ok = isinstance(result, TrackerCheck) and result.ok
        self._checked[url] = ok
        if isinstance(result, TrackerCheck):
            sentence = result.sentence
        elif isinstance(error, TrackerReadError):
            sentence = str(error)
        else:
            sentence = text("settings.check.failed")
        self._show_url_result(("✓ " if ok else "") + sentence, ok)
        self.validate()
        if self._save_after_check:
            self._save_after_check = False
            if ok:
                self.save()
            else:
                self._save_anyway = True
                self.save_button.setText(text("settings.save-anyway"))

    def _show_url_result(self, text: str, ok: bool | None) -> None:
        self.url_result.setText(text)
        self.url_result.setStyleSheet("" if ok is None else ok_style() if ok else error_style())
        self.url_result.setVisible(True)

    # -- saving ---------------------------------------------------------------------

    def _load_token(self, url: str) -> None:
        def loaded(token: object) -> None:
            if isinstance(token, str) and not self.token_edit.text():
                self._token_loaded = token
                self.token_edit.setText(token)

        run_in_background(lambda: load_join_token(url), on_success=loaded, parent=self)

    def _choose_model_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, text("settings.model.choose"))
        if folder:
            self.model_edit.setText(folder)

    def open_hub_download(self) -> HubDownloadDialog:
        """The Hugging Face download; the model field takes the folder it downloads."""
        if self.hub_download is None:
            self.hub_download = HubDownloadDialog(self)
            self.hub_download.downloaded.connect(self.model_edit.setText)
        self.hub_download.open()
        return self.hub_download

    def save(self) -> None:
        """Check the address if needed, then keep everything; the dialog closes on success."""
        if self.validate():
            return
        settings = self.current_settings()
        changed_url = settings.tracker_url != self.original.tracker_url
        if changed_url and not self._checked.get(settings.tracker_url) and not self._save_anyway:
            self._save_after_check = True
            self.check_url()
            return
        if not self._save_extras(settings):
            return
        self.store.save(settings)
        log.info("settings saved to %s", self.store.location)
        self.accept()

    def _save_extras(self, settings: AppSettings) -> bool:
        """The join token (keyring) and start at login (OS); False after a failure."""
        token = self.token_edit.text().strip()
        try:
            if token and token != self._token_loaded:
                save_join_token(settings.tracker_url, token)
                self._token_loaded = token
        except MeshnetError as exc:
            self._show_problem("join_token", text("settings.token.failed", error=exc), ADVANCED_TAB)
            return False
        if settings.start_at_login != self.original.start_at_login:
            try:
                self._autostart(settings.start_at_login, app_command())
            except AutostartError as exc:
                self._show_problem("start_at_login", str(exc), COMPUTER_TAB)
                return False
        return True

    def _show_problem(self, name: str, sentence: str, tab: int) -> None:
        label = self.problems[name]
        label.setText(sentence)
        label.setVisible(True)
        self.tabs.setCurrentIndex(tab)

    # -- screenshots ----------------------------------------------------------------

    def show_sample(self, name: str = "computer") -> None:
        """Realistic settings on tab ``name`` (one of SAMPLE_NAMES); saves nothing."""
        # Loaded only here: the sample data and its canned tracker (an httpx.MockTransport)
        # are the screenshot run's, never part of a settings window a user opens.
        from app.ui.screens.settings.samples import (
            SAMPLE_HARDWARE,
            SAMPLE_NETWORK,
            SAMPLE_SETTINGS,
            SAMPLE_TABS,
            SAMPLE_TRACKER,
            sample_check,
        )

        if name not in self.SAMPLE_NAMES:
            raise ValueError(f"unknown sample {name!r}; choose one of {self.SAMPLE_NAMES}")
        self._sample = True
        self.device_field.set_hardware(SAMPLE_HARDWARE)
        self.fill(SAMPLE_SETTINGS)
        self.show_network(SAMPLE_NETWORK)
        if name == "checked":
            self.url_edit.setText(SAMPLE_TRACKER)
            self.own_tracker.setChecked(True)
            self._checked_url(SAMPLE_TRACKER, sample_check(SAMPLE_TRACKER), None)
        elif name == "problems":
            self.fill(replace(self.current_settings(), memory_cap_mb=128))
        self.tabs.setCurrentIndex(SAMPLE_TABS[name])


__all__ = ["SettingsDialog", "app_command"]
