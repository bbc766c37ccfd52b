"""The doctor wizard's shell: page order, Back and Finish.

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
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QWidget, QWizard, QWizardPage

from app.network_join import Preview
from app.texts import text
from app.ui.json_child import node_argv
from app.ui.screens.doctor.child_page import ChildPage
from app.ui.screens.doctor.gpu_box import GpuRuntimeBox
from app.ui.screens.doctor.hardware import HardwarePage
from app.ui.screens.doctor.join import JoinPage
from app.ui.screens.doctor.memory import MemoryPage
from app.ui.screens.doctor.model_import import ImportPage
from app.ui.screens.doctor.result import ResultPage
from app.ui.screens.doctor.state import Controller, NodeCommand, WizardState
from app.ui.screens.doctor.testing import TestPage
from app.ui.screens.doctor.welcome import WelcomePage
from app.ui.settings_store import SettingsStore
from core.paths import platform_data_home

log = logging.getLogger(__name__)


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
        # an NVIDIA PC is offered the GPU runtime, a download apart from the installer
        self.gpu_box: GpuRuntimeBox | None = None
        if getattr(sys, "frozen", False):
            bundle = Path(sys.executable).parent
            self.gpu_box = GpuRuntimeBox.offered(bundle, Path(platform_data_home()))
        if self.gpu_box is not None:
            self.hardware.layout_.insertWidget(2, self.gpu_box)
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
            self.reset_state()
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
        self.reset_state()  # what the skipped welcome page would have done
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

    def reset_state(self, **values: Any) -> None:
        """The state a fresh run starts from, with ``values`` set (a sample's data too)."""
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
        if self.gpu_box is not None:
            self.gpu_box.cancel()  # the part stays: the next start resumes it
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
        """Show page ``name`` (one of SAMPLE_NAMES) with realistic data; starts no child.
        The data loads only here (app/ui/screens/doctor/samples.py)."""
        from app.ui.screens.doctor import samples

        if name not in self.SAMPLE_NAMES:
            raise ValueError(f"unknown sample {name!r}; choose one of {self.SAMPLE_NAMES}")
        if name.startswith("join"):
            self._show_join_sample(joined=name == "join-joined")
            return
        hardware = dict(samples.SAMPLE_HARDWARE)
        hardware_page = name == "hardware"
        self.reset_state(
            sample=True,
            model=None,
            hardware=None if hardware_page else hardware,
            layers=(0, 30),
            report=samples.sample_report(name),
            error=None,
        )
        page_id = {
            "welcome": self.PAGE_WELCOME,
            "hardware": self.PAGE_HARDWARE,
            "memory": self.PAGE_MEMORY,
            "import": self.PAGE_IMPORT,
            "test": self.PAGE_TEST,
        }.get(name, self.PAGE_RESULT)
        no_history = (self.PAGE_WELCOME, self.PAGE_IMPORT, self.PAGE_TEST)
        self.show_sample_page(page_id, back=page_id not in no_history)
        if hardware_page:
            self.hardware.apply_hardware(hardware)
            self.hardware.ok = True
            self.hardware.completeChanged.emit()
        elif name in samples.SAMPLE_PROGRESS:
            done, message, total, stage = samples.SAMPLE_PROGRESS[name]
            page = self.import_page if name == "import" else self.test
            page.progress.setVisible(True)
            page.cancel_button.setVisible(True)
            data = {"stage": stage, "done": done, "total": total}
            page.show_progress({"kind": "progress", "message": message, "data": data})
        elif name == "leaderboard":
            self.result_page.leaderboard.set_values("Ada", "Riverside Makers")

    def _show_join_sample(self, *, joined: bool) -> None:
        from app.ui.screens.doctor import samples

        self.reset_state(sample=True)
        page = self.join_page
        page.sample = True
        self.show_sample_page(self.PAGE_JOIN, back=False)
        page.joined = samples.SAMPLE_JOINED if joined else None
        page._show_joined()
        if not joined:
            page.link_edit.blockSignals(True)
            page.link_edit.setText(samples.SAMPLE_LINK)
            page.link_edit.setCursorPosition(0)
            page.link_edit.blockSignals(False)
            page.show_preview(Preview(samples.SAMPLE_LINK, samples.SAMPLE_NETWORK))
        page.completeChanged.emit()

    def show_sample_page(self, page_id: int, *, back: bool) -> None:
        """Restart on ``page_id`` with no history; Back shown as a real run would."""
        self.setStartId(page_id)
        self.restart()
        self.setStartId(self.PAGE_JOIN)
        self._sample_back = back
        self.button(QWizard.WizardButton.BackButton).setEnabled(back)


__all__ = ["DoctorWizard"]
