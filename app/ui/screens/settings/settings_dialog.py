"""Settings: the network, this computer's share, and when to pause for the person using it.

The Connection tab names the network this computer joined (the wizard's join page
does the joining); a tracker address of one's own sits behind the Advanced choice
"I run my own tracker", and is saved only while that is ticked.

Every field is checked as it changes (``validate_settings``); a bad value gets
its sentence right beside it, the tab holding it is marked, and Save stays
disabled until it is fixed. The tracker address is checked with a real request
(``check_tracker``, in the background): on the Check button, and on Save when
the address was changed and not checked yet (changing only a pause rule while
offline needs no tracker); an address that does not answer can still be saved
on purpose ("Save anyway"). The join token goes to the OS
keyring, never into the settings file. The model is the packaged default, a
folder chosen on disk, or one downloaded from Hugging Face (``hub_download``).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import httpx
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.autostart import AutostartError, set_autostart
from app.network_join import joined_network
from app.node_command import is_frozen
from app.probes.gpu import gpu_rules_measurable
from app.settings_model import AppSettings, validate_settings
from app.texts import plain, text
from app.tracker_api import TrackerCheck, TrackerReadError, check_tracker
from app.ui.screens.settings.hub_download import HubDownloadDialog
from app.ui.settings_store import SettingsStore
from app.ui.tasks import BackgroundTask, run_in_background
from app.ui.widgets.labels import wrapping_label
from app.ui.widgets.leaderboard_fields import LeaderboardFields
from app.ui.widgets.settings_fields import (
    DeviceField,
    ProgramsField,
    error_style,
    form_page,
    ok_style,
    problem_label,
)
from core.errors import MeshnetError
from core.join_tokens import load_join_token, save_join_token
from core.joined_network import JoinedNetwork

log = logging.getLogger(__name__)

CheckTracker = Callable[[str], TrackerCheck]
SetAutostart = Callable[[bool, list[str]], None]


def app_command() -> list[str]:
    """The command that starts this app at login: in the tray, without opening a window."""
    if is_frozen():
        return [sys.executable, "--hidden"]
    return [sys.executable, "-m", "app.ui.main", "--hidden"]


def _spin(low: int, high: int, suffix: str = "", special: str = "") -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(low, high)
    spin.setSuffix(suffix)
    if special:
        spin.setSpecialValueText(special)
    spin.setMinimumWidth(110)
    return spin


def _row(*widgets: QWidget) -> QHBoxLayout:
    row = QHBoxLayout()
    for widget in widgets:
        row.addWidget(widget)
    row.addStretch(1)
    return row


class SettingsDialog(QDialog):
    """The settings window. ``show_sample(name)`` fills a tab for screenshots."""

    # "checked": a tracker check's answer (Advanced); "problems": fields to change
    SAMPLE_NAMES = ("connection", "computer", "pause", "checked", "problems")
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
        self._build_connection()
        self._build_computer()
        self._build_pause()
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.save_button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        layout.addWidget(self.buttons)
        self.resize(620, 480)
        self._sample = False
        self.original = store.load()
        self.reload()

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

    # -- building -------------------------------------------------------------------

    def _build_connection(self) -> None:
        self.network_label = wrapping_label()
        self.network_label.setObjectName("joinedNetwork")
        self.own_tracker = QCheckBox(text("join.advanced"))
        self.own_tracker.setAccessibleName(plain("join.advanced.name"))
        self.url_edit = QLineEdit()
        self.url_edit.setPlaceholderText("https://tracker.example.org")
        self.url_edit.setAccessibleName(text("settings.url.name"))
        self.check_button = QPushButton(text("settings.check"))
        self.check_button.clicked.connect(self.check_url)
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
                (text("settings.url"), [url_row, self.url_result, self.problems["tracker_url"]]),
                (
                    text("settings.token"),
                    [
                        token_row,
                        QLabel(text("settings.token.note")),
                        self.problems["join_token"],
                    ],
                ),
            ]
        )
        page = QWidget()
        column = QVBoxLayout(page)
        column.addWidget(self.network_label)
        column.addWidget(self.own_tracker)
        column.addWidget(self.own_tracker_box)
        self.leaderboard = LeaderboardFields()  # saved with the rest; app/credit_link.py posts it
        column.addWidget(self.leaderboard)
        column.addStretch(1)
        self.tabs.addTab(page, text("settings.tab.connection"))
        self.own_tracker.toggled.connect(self._own_tracker_toggled)
        self.url_edit.textChanged.connect(self._url_edited)
        self.token_edit.textChanged.connect(self.validate)

    def _build_computer(self) -> None:
        self.device_field = DeviceField(self.store.last_hardware())
        self.model_edit = QLineEdit()
        self.model_edit.setPlaceholderText(text("settings.model.default"))
        browse = QPushButton(text("settings.model.browse"))
        browse.clicked.connect(self._choose_model_folder)
        self.download_button = QPushButton(text("settings.model.download"))
        self.download_button.clicked.connect(self.open_hub_download)
        self.own_layers = QCheckBox(text("settings.layers.own"))
        self.layer_start = _spin(0, 999)
        self.layer_end = _spin(0, 999)
        up_to = QLabel(text("settings.layers.up-to"))
        up_to.setBuddy(self.layer_end)
        self.own_layers.toggled.connect(self.layer_start.setEnabled)
        self.own_layers.toggled.connect(self.layer_end.setEnabled)
        self.layer_start.setAccessibleName(plain("settings.layers.from.name"))
        self.layer_end.setAccessibleName(plain("settings.layers.up-to.name"))
        self.memory_cap = _spin(0, 1_000_000, " MB", text("settings.memory.none"))
        self.memory_cap.setSingleStep(256)
        self.start_at_login = QCheckBox(text("settings.login"))
        self.batch_jobs = QCheckBox(text("settings.batch"))
        self.batch_jobs.setToolTip(text("settings.batch.tip"))
        self.tabs.addTab(
            form_page(
                [
                    (
                        text("settings.device"),
                        [self.device_field.combo, self.device_field.hint, self.problems["device"]],
                    ),
                    (
                        text("settings.model"),
                        [
                            self.model_edit,
                            _row(browse, self.download_button),
                            self.problems["model"],
                        ],
                    ),
                    (
                        text("settings.layers"),
                        [
                            self.own_layers,
                            _row(self.layer_start, up_to, self.layer_end),
                            self.problems["layers"],
                        ],
                    ),
                    (
                        text("settings.memory"),
                        [_row(self.memory_cap), self.problems["memory_cap_mb"]],
                    ),
                    ("", [self.start_at_login, self.problems["start_at_login"]]),
                    ("", [self.batch_jobs]),
                ]
            ),
            text("settings.tab.computer"),
        )
        self.device_field.combo.currentTextChanged.connect(self.validate)
        self.model_edit.textChanged.connect(self.validate)
        for spin in (self.layer_start, self.layer_end, self.memory_cap):
            spin.valueChanged.connect(self.validate)
        self.own_layers.toggled.connect(self.validate)

    def _build_pause(self) -> None:
        self.gpu_busy = QCheckBox(text("settings.gpu.busy"))
        self.gpu_hot = QCheckBox(text("settings.gpu.hot"))
        self.gpu_temp = _spin(0, 150, " °C")
        self.gpu_hot.toggled.connect(self.gpu_temp.setEnabled)
        self.gpu_temp.setAccessibleName(plain("settings.gpu.hot"))
        # beside the two rules: where the card cannot be read, they never pause it
        self.gpu_note = QLabel(text("settings.gpu.unmeasured"))
        self.gpu_note.setWordWrap(True)
        self.gpu_note.setVisible(False)
        self.programs = ProgramsField()
        self.on_battery = QCheckBox(text("settings.battery"))
        self.when_idle = QCheckBox(text("settings.idle.after"))
        self.idle = _spin(0, 1000, text("settings.idle.minutes"))
        self.when_idle.toggled.connect(self.idle.setEnabled)
        self.idle.setAccessibleName(plain("settings.idle.name"))
        idle_row = _row(self.when_idle, self.idle, QLabel(text("settings.idle.untouched")))
        self.tabs.addTab(
            form_page(
                [
                    (
                        text("settings.gpu"),
                        [
                            self.gpu_busy,
                            _row(self.gpu_hot, self.gpu_temp),
                            self.gpu_note,
                            self.problems["pause_above_gpu_temp_c"],
                        ],
                    ),
                    (
                        text("settings.programs"),
                        [
                            QLabel(text("settings.programs.intro")),
                            self.programs,
                            self.problems["pause_programs"],
                        ],
                    ),
                    (text("settings.power"), [self.on_battery]),
                    (text("settings.idle"), [idle_row, self.problems["idle_minutes"]]),
                    ("", [QLabel(text("settings.resumes"))]),
                ]
            ),
            text("settings.tab.pause"),
        )
        for box in (self.gpu_busy, self.gpu_hot, self.on_battery, self.when_idle):
            box.toggled.connect(self.validate)
        self.gpu_temp.valueChanged.connect(self.validate)
        self.idle.valueChanged.connect(self.validate)
        self.programs.changed.connect(self.validate)

    # -- values -----------------------------------------------------------------

    def fill(self, s: AppSettings) -> None:
        """Show ``s`` in the fields."""
        self.url_edit.setText(s.tracker_url)
        self.leaderboard.set_values(s.display_name, s.team)
        self.own_tracker.setChecked(bool(s.tracker_url))
        self._own_tracker_toggled(self.own_tracker.isChecked())
        self.device_field.set_value(s.device)
        self.model_edit.setText(s.model or "")
        self.own_layers.setChecked(s.layers is not None)
        start, end = s.layers or (0, 0)
        self.layer_start.setValue(start)
        self.layer_end.setValue(end)
        self.layer_start.setEnabled(s.layers is not None)
        self.layer_end.setEnabled(s.layers is not None)
        self.memory_cap.setValue(s.memory_cap_mb or 0)
        self.start_at_login.setChecked(s.start_at_login)
        self.batch_jobs.setChecked(s.run_batch_jobs)
        self.gpu_busy.setChecked(s.pause_when_gpu_busy)
        self.gpu_hot.setChecked(s.pause_above_gpu_temp_c is not None)
        self.gpu_temp.setValue(s.pause_above_gpu_temp_c or 85)
        self.gpu_temp.setEnabled(s.pause_above_gpu_temp_c is not None)
        self.programs.set_programs(s.pause_programs)
        self.on_battery.setChecked(s.pause_on_battery)
        self.when_idle.setChecked(s.idle_minutes is not None)
        self.idle.setValue(s.idle_minutes or 10)
        self.idle.setEnabled(s.idle_minutes is not None)
        self.validate()

    def current_settings(self) -> AppSettings:
        """The settings as the fields show them now (valid or not)."""
        model = self.model_edit.text().strip()
        display_name, team = self.leaderboard.values()
        return replace(
            self.original,
            tracker_url=self.url_edit.text().strip() if self.own_tracker.isChecked() else "",
            model=model or None,
            layers=(
                (self.layer_start.value(), self.layer_end.value())
                if self.own_layers.isChecked()
                else None
            ),
            device=self.device_field.value(),
            memory_cap_mb=self.memory_cap.value() or None,
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
        tab_fields = (
            (text("settings.tab.connection"), {"tracker_url"}),
            (text("settings.tab.computer"), {"device", "model", "layers", "memory_cap_mb"}),
            (
                text("settings.tab.pause"),
                {"pause_above_gpu_temp_c", "pause_programs", "idle_minutes"},
            ),
        )
        for index, (title, names) in enumerate(tab_fields):
            self.tabs.setTabText(index, f"⚠ {title}" if names & problems.keys() else title)
        self.save_button.setEnabled(not problems and self._checking_url is None)
        return problems

    # -- the tracker check --------------------------------------------------------

    def _own_tracker_toggled(self, on: bool) -> None:
        self.own_tracker_box.setVisible(on)
        self.validate()

    def show_gpu_measurable(self, measurable: bool) -> None:
        """Say beside the graphics-card rules when this card cannot be read."""
        self.gpu_note.setVisible(not measurable)

    def show_network(self, joined: JoinedNetwork | None) -> None:
        """Say which network this computer belongs to (the wizard's join page changes it)."""
        if joined is None:
            self.network_label.setText(text("settings.network.none"))
            return
        name = joined.name or joined.tracker_url
        if joined.operator:
            name = text("join.network-by", name=name, operator=joined.operator)
        self.network_label.setText(text("settings.network", network=name))

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
            self._show_problem("join_token", text("settings.token.failed", error=exc), 0)
            return False
        if settings.start_at_login != self.original.start_at_login:
            try:
                self._autostart(settings.start_at_login, app_command())
            except AutostartError as exc:
                self._show_problem("start_at_login", str(exc), 1)
                return False
        return True

    def _show_problem(self, name: str, sentence: str, tab: int) -> None:
        label = self.problems[name]
        label.setText(sentence)
        label.setVisible(True)
        self.tabs.setCurrentIndex(tab)

    # -- screenshots ----------------------------------------------------------------

    def show_sample(self, name: str = "connection") -> None:
        """Realistic settings on tab ``name`` (one of SAMPLE_NAMES); saves nothing."""
        if name not in self.SAMPLE_NAMES:
            raise ValueError(f"unknown sample {name!r}; choose one of {self.SAMPLE_NAMES}")
        self._sample = True
        self.device_field.set_hardware(_SAMPLE_HARDWARE)
        self.fill(
            AppSettings(
                device="cuda:0",
                memory_cap_mb=8192,
                start_at_login=True,
                pause_above_gpu_temp_c=83,
                pause_programs=("eldenring.exe", "cyberpunk2077.exe"),
                idle_minutes=10,
                display_name="Ada",
                team="Riverside Makers",
            )
        )
        self.show_network(
            JoinedNetwork(
                tracker_url="https://tracker.riverside-makers.example",
                key_fingerprint="3f9a1c0e7b2d4a6f8e1b3c5d7f9a0b2c",
                join_token="",
                name="Riverside Makers",
                operator="Riverside Makerspace e.V.",
            )
        )
        if name == "checked":
            url = "http://tracker.riverside-makers.example:8765"
            self.url_edit.setText(url)
            self.own_tracker.setChecked(True)
            self._checked_url(url, _sample_check(url), None)
        elif name == "problems":
            self.fill(replace(self.current_settings(), layers=(12, 4), memory_cap_mb=128))
        self.tabs.setCurrentIndex(SAMPLE_TABS[name])


SAMPLE_TABS = {"connection": 0, "computer": 1, "pause": 2, "checked": 0, "problems": 1}


def _sample_check(url: str) -> TrackerCheck:
    """The real check against a canned tracker state: 3 live nodes, 1 recipe."""
    state = {"generated_at": 0.0, "models": [], "recipes": [{}], "nodes": [], "nodes_total_live": 3}
    return check_tracker(
        url, transport=httpx.MockTransport(lambda _r: httpx.Response(200, json=state))
    )


_SAMPLE_HARDWARE: dict[str, Any] = {
    "device": {"kind": "cuda", "name": "NVIDIA GeForce RTX 4070", "total_bytes": 12_878_086_144}
}
