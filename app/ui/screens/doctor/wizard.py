"""The doctor wizard's shell: page order, Back and Finish, and screenshot samples.

The first page joins a network (join.py); the checks of this computer follow.

Each step that works runs one ``meshnet-node`` child (``hardware --json``,
``models import-default --json``, ``doctor --json``) through
:class:`~app.ui.json_child.JsonChild`; the GUI never loads the model itself.
Finish saves the chosen layers and, when asked, turns Contribute on with the
report the test just saved (``controller.start(report_path)``), so the node
does not run a second test forward. Closing the wizard mid-run stops the child.

The pages live beside this file, one module each (welcome, hardware, layers,
model_import, testing, result).
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QWidget, QWizard, QWizardPage

from app.network_join import Preview
from app.texts import text
from app.ui.json_child import node_argv
from app.ui.screens.doctor.child_page import ChildPage
from app.ui.screens.doctor.hardware import HardwarePage
from app.ui.screens.doctor.join import JoinPage
from app.ui.screens.doctor.memory import MemoryPage
from app.ui.screens.doctor.model_import import ImportPage
from app.ui.screens.doctor.result import ResultPage
from app.ui.screens.doctor.state import Controller, NodeCommand, WizardState
from app.ui.screens.doctor.testing import TestPage
from app.ui.screens.doctor.welcome import WelcomePage
from app.ui.settings_store import SettingsStore
from core.network.invites import NetworkInfo
from core.network.joined_network import JoinedNetwork

log = logging.getLogger(__name__)


SAMPLE_HARDWARE: dict[str, Any] = {
    "device": {
        "kind": "cuda",
        "name": "NVIDIA GeForce RTX 4070",
        "total_bytes": 12_878_086_144,
        "free_bytes": 11_234_000_000,
    },
    "ram_total_bytes": 34_359_738_368,
    "ram_available_bytes": 21_474_836_480,
    "disk_free_bytes": 412_316_860_416,
    "cpu_count": 16,
    "model": {
        "model_id": "HuggingFaceTB/SmolLM2-135M-Instruct",
        "layer_count": 30,
        "imported": False,
    },
    "suggested_layers": [0, 30],
    "suggestion": "Layers 0–30 of SmolLM2-135M-Instruct (the whole model) fit: they need "
    "1.2 GB, 11.2 GB of graphics memory is free.",
}

_SAMPLE_REPORT: dict[str, Any] = {
    "status": "passed",
    "diagnostics": [],
    "tokens_per_second": 41.7,
    "shard": {"start": 0, "end": 30},
    "model": {"model_id": "HuggingFaceTB/SmolLM2-135M-Instruct"},
}


SAMPLE_LINK = (
    "meshnet://join?tracker=https://tracker.riverside-makers.example&code=K7QX-2M9P"
    "&key=3f9a1c0e7b2d4a6f8e1b3c5d7f9a0b2c"
)
SAMPLE_NETWORK = NetworkInfo(
    name="Riverside Makers",
    operator="Riverside Makerspace e.V.",
    description="Members' gaming PCs answer questions for the makerspace's chat assistant "
    "in the evenings and at weekends.",
    models=("HuggingFaceTB/SmolLM2-135M-Instruct",),
    raw={},
)
SAMPLE_JOINED = JoinedNetwork(
    tracker_url="https://tracker.riverside-makers.example",
    key_fingerprint="3f9a1c0e7b2d4a6f8e1b3c5d7f9a0b2c",
    join_token="",
    name="Riverside Makers",
    operator="Riverside Makerspace e.V.",
)


class DoctorWizard(QWizard):
    """The doctor as a wizard. ``show_sample(name)`` fills one page for screenshots."""

    PAGE_WELCOME, PAGE_HARDWARE, PAGE_MEMORY, PAGE_IMPORT, PAGE_TEST, PAGE_RESULT = range(6)
    PAGE_JOIN = 6  # shown first (setStartId); the numbers above stay as they were
    SAMPLE_NAMES = (
        "join",
        "join-joined",
        "welcome",
        "hardware",
        "memory",
        "import",
        "test",
        "result-passed",
        "result-failed",
        "leaderboard",
    )

    def __init__(
        self,
        store: SettingsStore,
        controller: Controller,
        parent: QWidget | None = None,
        *,
        node_command: NodeCommand = node_argv,
        join_page: JoinPage | None = None,
    ) -> None:
        super().__init__(parent)
        self.store = store
        self.controller = controller
        self.state = WizardState()
        self._sample_back = False
        self.setWindowTitle(text("wizard.title"))
        self.setWizardStyle(QWizard.WizardStyle.ModernStyle)
        self.setOption(QWizard.WizardOption.NoBackButtonOnLastPage, False)
        self.setButtonText(QWizard.WizardButton.FinishButton, text("wizard.finish"))
        self.join_page = join_page or JoinPage()
        self.welcome = WelcomePage()
        self.hardware = HardwarePage(self.state, node_command)
        self.memory = MemoryPage(self.state)
        self.import_page = ImportPage(self.state, node_command)
        self.test = TestPage(self.state, node_command)
        self.result_page = ResultPage(self.state, controller)
        pages: list[QWizardPage] = [
            self.welcome,
            self.hardware,
            self.memory,
            self.import_page,
            self.test,
            self.result_page,
        ]
        for page_id, page in enumerate(pages):
            self.setPage(page_id, page)
            if isinstance(page, ChildPage):
                page.busy_changed.connect(self._refresh_back)
        self.setPage(self.PAGE_JOIN, self.join_page)
        self.setStartId(self.PAGE_JOIN)
        # The quick path (issue 22): a network just joined goes on by itself through
        # the checks; the contributor clicks Join, Next (the memory share) and Finish.
        self.quick = False
        self.join_page.network_joined.connect(self._joined_now)
        for page in (self.hardware, self.import_page):
            page.succeeded.connect(self._quick_next)
        self.currentIdChanged.connect(self._refresh_back)
        self.result_page.other_layers_requested.connect(self._back_to_memory)
        self.resize(620, 460)

    # -- flow -------------------------------------------------------------------

    def initializePage(self, page_id: int) -> None:
        if page_id == self.PAGE_JOIN and not self.state.sample:
            self.join_page.own_tracker_url = self.store.load().tracker_url.strip()
        if page_id == self.PAGE_WELCOME and not self.state.sample:
            self._reset_state()
        if page_id == self.PAGE_MEMORY and self.state.hardware and not self.state.sample:
            self.store.save_hardware(self.state.hardware)  # the settings dialog offers its device
        if page_id == self.PAGE_RESULT and not self.state.sample:
            settings = self.store.load()
            self.result_page.leaderboard.set_values(settings.display_name, settings.team)
        super().initializePage(page_id)

    def _joined_now(self) -> None:
        if self.state.sample:
            return
        self.quick = True
        self._reset_state()  # what the skipped welcome page would have done
        if self.currentId() == self.PAGE_JOIN:
            QTimer.singleShot(0, self.next)  # once the page has said it is complete

    def _quick_next(self) -> None:
        page = self.currentPage()
        if self.quick and isinstance(page, ChildPage) and page.isComplete():
            self.next()

    def nextId(self) -> int:
        current = self.currentId()
        if current == self.PAGE_JOIN:
            # the welcome page says what the join page already said: skip it after a join
            return self.PAGE_HARDWARE if self.quick else self.PAGE_WELCOME
        if current == self.PAGE_MEMORY and not self._needs_import():
            return self.PAGE_TEST
        if current == self.PAGE_RESULT:
            return -1
        return current + 1

    def _needs_import(self) -> bool:
        """Only the packaged default model is imported here; a chosen folder is used as is."""
        model = (self.state.hardware or {}).get("model") or {}
        return self.state.model is None and not model.get("imported", False)

    def go_back_to(self, page_id: int) -> None:
        while self.currentId() != page_id and self.visitedIds() and self.currentId() != -1:
            before = self.currentId()
            self.back()
            if self.currentId() == before:
                break

    def open_link(self, link: str) -> None:
        """An invite link opened (--join, a meshnet:// link, network.json): show it on the
        join page, going back there when the wizard is further along."""
        current = self.currentId()
        self.quick = False
        if current not in (-1, self.PAGE_JOIN):
            for page in (self.hardware, self.import_page, self.test):
                page.cancel()  # a check under way belongs to the network being left
            self.restart()
        self.join_page.set_link(link)  # shown now, or when the page first opens

    def _back_to_memory(self) -> None:
        self.go_back_to(self.PAGE_MEMORY)

    def _reset_state(self, **values: Any) -> None:
        settings = self.store.load()
        joined = self.join_page.joined
        fresh = WizardState(
            model=settings.model,
            # the memory page asks this tracker: your own, else the network joined
            tracker_url=settings.tracker_url or (joined.tracker_url if joined else None),
            device=settings.device,
            memory_cap_mb=settings.memory_cap_mb,
            layers=settings.layers,
        )
        for key, value in {**vars(fresh), **values}.items():
            setattr(self.state, key, value)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self.state.sample:  # showing re-evaluates the buttons; keep the sample's Back
            self.button(QWizard.WizardButton.BackButton).setEnabled(self._sample_back)

    def _refresh_back(self, *_args: object) -> None:
        page = self.currentPage()
        if isinstance(page, ChildPage) and page.busy:
            self.button(QWizard.WizardButton.BackButton).setEnabled(False)

    def running_page(self) -> ChildPage | None:
        for page in (self.hardware, self.import_page, self.test):
            if page.busy:
                return page
        return None

    def done(self, result: int) -> None:
        """Closing, Cancel and Finish all end here: stop any child first."""
        for page in (self.hardware, self.import_page, self.test):
            page.cancel()
        self.join_page.cancel()
        if result == QWizard.DialogCode.Accepted and not self.state.sample:
            self.finish()
        super().done(result)

    def finish(self) -> None:
        """Save the tested part, memory share and leaderboard name and team (optional);
        start contributing with the fresh report when asked."""
        if not self.result_page.passed:
            return
        display_name, team = self.result_page.leaderboard.values()
        self.store.update(
            layers=self.state.layers,
            memory_cap_mb=self.state.memory_cap_mb,
            display_name=display_name,
            team=team,
        )
        if self.result_page.contribute.isChecked() and not self.controller.running:
            log.info("starting to contribute with the wizard's report %s", self.state.report_path)
            self.controller.start(self.state.report_path)

    # -- screenshots ----------------------------------------------------------------

    def show_sample(self, name: str) -> None:
        """Show page ``name`` (one of SAMPLE_NAMES) with realistic data; starts no child."""
        if name not in self.SAMPLE_NAMES:
            raise ValueError(f"unknown sample {name!r}; choose one of {self.SAMPLE_NAMES}")
        report: dict[str, Any] | None = None
        error = None
        if name in ("result-passed", "leaderboard"):
            report = dict(_SAMPLE_REPORT)
        elif name == "result-failed":
            report = {
                **_SAMPLE_REPORT,
                "status": "failed",
                "tokens_per_second": None,
                "diagnostics": [
                    "Not enough memory: this range needs 1.2 GB, 0.3 GB is free. "
                    "Choose fewer layers."
                ],
            }
        if name.startswith("join"):
            self._show_join_sample(joined=name == "join-joined")
            return
        hardware = dict(SAMPLE_HARDWARE)
        hardware_page = name == "hardware"
        self._reset_state(
            sample=True,
            model=None,
            hardware=None if hardware_page else hardware,
            layers=(0, 30),
            report=report,
            error=error,
        )
        page_id = {
            "welcome": self.PAGE_WELCOME,
            "hardware": self.PAGE_HARDWARE,
            "memory": self.PAGE_MEMORY,
            "import": self.PAGE_IMPORT,
            "test": self.PAGE_TEST,
        }.get(name, self.PAGE_RESULT)
        self.setStartId(page_id)
        self.restart()
        self.setStartId(self.PAGE_JOIN)
        # No history behind a sample page; show Back as a real run would.
        self._sample_back = page_id not in (self.PAGE_WELCOME, self.PAGE_IMPORT, self.PAGE_TEST)
        self.button(QWizard.WizardButton.BackButton).setEnabled(self._sample_back)
        if hardware_page:
            self.hardware.apply_hardware(hardware)
            self.hardware.ok = True
            self.hardware.completeChanged.emit()
        elif name == "import":
            self._sample_progress(
                self.import_page, 160, "Unpacking the default model…", 275, stage="import"
            )
        elif name == "test":
            self._sample_progress(
                self.test, 12, "Checking layers 0–15 against the reference…", 19, stage="probe"
            )
        elif name == "leaderboard":
            self.result_page.leaderboard.set_values("Ada", "Riverside Makers")

    def _show_join_sample(self, *, joined: bool) -> None:
        self._reset_state(sample=True)
        page = self.join_page
        page.sample = True
        self.setStartId(self.PAGE_JOIN)
        self.restart()
        self._sample_back = False
        page.joined = SAMPLE_JOINED if joined else None
        page._show_joined()
        if not joined:
            page.link_edit.blockSignals(True)
            page.link_edit.setText(SAMPLE_LINK)
            page.link_edit.setCursorPosition(0)
            page.link_edit.blockSignals(False)
            page.show_preview(Preview(SAMPLE_LINK, SAMPLE_NETWORK))
        page.completeChanged.emit()

    @staticmethod
    def _sample_progress(
        page: ChildPage, done: int, message: str, total: int = 100, *, stage: str = ""
    ) -> None:
        """A progress event as the node child sends it: its stage code and its sentence."""
        page.progress.setVisible(True)
        page.cancel_button.setVisible(True)
        data = {"stage": stage, "done": done, "total": total}
        page.show_progress({"kind": "progress", "message": message, "data": data})


__all__ = ["SAMPLE_HARDWARE", "DoctorWizard"]
