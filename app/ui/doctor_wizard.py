"""The doctor wizard: hardware → layers → model import → real test forward → result.

Each step that works runs one ``meshnet-node`` child (``hardware --json``,
``models import-default --json``, ``doctor --json``) through
:class:`~app.ui.json_child.JsonChild`; the GUI never loads the model itself.
Finish saves the chosen layers and, when asked, turns Contribute on with the
report the test just saved (``controller.start(report_path)``), so the node
does not run a second test forward. Closing the wizard mid-run stops the child.

The first pages live in app/ui/wizard_pages.py; the pages that import, test
and judge live here with the flow.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Protocol

from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QPushButton,
    QVBoxLayout,
    QWidget,
    QWizard,
    QWizardPage,
)

from app.node_command import STDIN_CONTROL
from app.ui.json_child import node_argv
from app.ui.settings_store import SettingsStore
from app.ui.wizard_pages import (
    ChildPage,
    HardwarePage,
    LayersPage,
    NodeCommand,
    WelcomePage,
    WizardState,
    _wrapping_label,
)

log = logging.getLogger(__name__)


class Controller(Protocol):
    """What the wizard needs of app.ui.controller.NodeController."""

    @property
    def running(self) -> bool: ...
    def start(self, report_path: str | None = None) -> None: ...


class ImportPage(ChildPage):
    def __init__(self, state: WizardState, node_command: NodeCommand) -> None:
        super().__init__(state, node_command, "Getting the model")
        self.cancel_button.setText("Cancel import")
        self.layout_.addStretch(1)

    def argv(self) -> list[str]:
        return self.node_command("models", "import-default", "--json", *STDIN_CONTROL)

    def before_start(self) -> None:
        self.status.setText("Preparing the default model for this computer…")

    def on_finished(self, exit_code: int, stdout: str) -> bool:
        try:
            result = json.loads(stdout) if stdout.strip() else None
        except json.JSONDecodeError:
            result = None
        if exit_code != 0 or not isinstance(result, dict):
            self.status.setText(
                self.last_error_sentence("The model could not be prepared.")
                + " Check the free disk space, then try again."
            )
            return False
        model = dict((self.state.hardware or {}).get("model") or {})
        model["imported"] = True
        self.state.hardware = {**(self.state.hardware or {}), "model": model}
        self.status.setText("The model is ready on this computer. Next: the test.")
        return True

    def on_cancelled(self) -> None:
        self.status.setText(
            "Import cancelled. Nothing was saved; you can try again whenever you like."
        )


class TestPage(ChildPage):
    def __init__(self, state: WizardState, node_command: NodeCommand) -> None:
        super().__init__(state, node_command, "Testing this computer")
        self.cancel_button.setText("Cancel test")
        self.layout_.addStretch(1)

    def argv(self) -> list[str]:
        start, end = self.state.layers or (0, 1)
        return self.node_command(
            "doctor",
            "--json",
            *STDIN_CONTROL,
            "--layers",
            f"{start}:{end}",
            *self.state.node_options(),
        )

    def before_start(self) -> None:
        start, end = self.state.layers or (0, 1)
        self.state.report = self.state.report_path = self.state.error = None
        self.state.extra["log"] = []
        self.state.extra.pop("result_message", None)
        self.status.setText(
            f"Loading layers {start} up to {end} and running a real test with them…"
        )

    def on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("kind")
        if kind == "report-saved":
            path = (event.get("data") or {}).get("path")
            self.state.report_path = str(path) if path else None
        elif kind == "result" and event.get("message"):
            self.state.extra["result_message"] = str(event["message"])
        super().on_event(event)

    def on_finished(self, exit_code: int, stdout: str) -> bool:
        """Exit 0 passed, 1 not passed (both with a report), 2 could not run."""
        return self.finish_test(exit_code, stdout)

    def finish_test(self, exit_code: int, stdout: str) -> bool:
        try:
            report = json.loads(stdout) if stdout.strip() else None
        except json.JSONDecodeError:
            report = None
        if isinstance(report, dict) and exit_code in (0, 1):
            self.state.report = report
        else:
            self.state.error = self.state.extra.get("result_message") or self.last_error_sentence(
                "The test could not run."
            )
        self.status.setText("The test has finished.")
        wizard = self.wizard()
        if wizard is not None and wizard.currentPage() is self:
            wizard.next()  # nothing to decide here: show the result at once
        return True

    def on_cancelled(self) -> None:
        self.status.setText("Test cancelled. Nothing was saved; try again when you are ready.")


class ResultPage(QWizardPage):
    def __init__(self, state: WizardState, controller: Controller) -> None:
        super().__init__()
        self.state = state
        self.controller = controller
        self.setFinalPage(True)
        layout = QVBoxLayout(self)
        self.headline = _wrapping_label()
        font = self.headline.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.headline.setFont(font)
        self.details = _wrapping_label()
        self.advice = _wrapping_label()
        self.contribute = QCheckBox("Start contributing now")
        self.other_layers = QPushButton("Choose other layers")
        self.other_layers.clicked.connect(self._choose_other_layers)
        layout.addWidget(self.headline)
        layout.addWidget(self.details)
        layout.addWidget(self.advice)
        layout.addWidget(self.contribute)
        row = QHBoxLayout()
        row.addWidget(self.other_layers)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addStretch(1)

    @property
    def passed(self) -> bool:
        return bool(self.state.report) and (self.state.report or {}).get("status") == "passed"

    def initializePage(self) -> None:
        self.setTitle("Test result")
        report = self.state.report or {}
        shard = report.get("shard") or {}
        start, end = shard.get("start"), shard.get("end")
        if (start, end) == (None, None) and self.state.layers:
            start, end = self.state.layers
        if self.passed:
            speed = report.get("tokens_per_second")
            speed_text = (
                f" at {speed:.1f} tokens per second" if isinstance(speed, int | float) else ""
            )
            self.headline.setText("Passed: this computer is ready to contribute.")
            self.details.setText(f"It ran layers {start} up to {end}{speed_text}.")
            running = self.controller.running
            self.advice.setText(
                "Contribute is already on; it uses these layers the next time it starts."
                if running
                else "Finish saves these layers and, with the box ticked, starts contributing."
            )
            self.contribute.setVisible(not running)
            self.contribute.setChecked(not running)
            self.other_layers.setVisible(False)
            return
        self.headline.setText("The test did not pass.")
        sentences = list(report.get("diagnostics") or [])
        if self.state.error:
            sentences.append(self.state.error)
        if not sentences:
            sentences.append("The test stopped without saying why.")
        self.details.setText("\n".join(f"• {sentence}" for sentence in sentences))
        self.advice.setText(
            "What to do: choose fewer layers or raise the memory limit, then test again. "
            "Nothing was changed; Contribute stays as it was."
        )
        self.contribute.setVisible(False)
        self.contribute.setChecked(False)
        self.other_layers.setVisible(True)

    def _choose_other_layers(self) -> None:
        wizard = self.wizard()
        if isinstance(wizard, DoctorWizard):
            wizard.go_back_to(DoctorWizard.PAGE_LAYERS)


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


class DoctorWizard(QWizard):
    """The doctor as a wizard. ``show_sample(name)`` fills one page for screenshots."""

    PAGE_WELCOME, PAGE_HARDWARE, PAGE_LAYERS, PAGE_IMPORT, PAGE_TEST, PAGE_RESULT = range(6)
    SAMPLE_NAMES = (
        "welcome",
        "hardware",
        "layers",
        "import",
        "test",
        "result-passed",
        "result-failed",
    )

    def __init__(
        self,
        store: SettingsStore,
        controller: Controller,
        parent: QWidget | None = None,
        *,
        node_command: NodeCommand = node_argv,
    ) -> None:
        super().__init__(parent)
        self.store = store
        self.controller = controller
        self.state = WizardState()
        self._sample_back = False
        self.setWindowTitle("MeshNet doctor")
        self.setWizardStyle(QWizard.WizardStyle.ModernStyle)
        self.setOption(QWizard.WizardOption.NoBackButtonOnLastPage, False)
        self.setButtonText(QWizard.WizardButton.FinishButton, "Finish")
        self.welcome = WelcomePage()
        self.hardware = HardwarePage(self.state, node_command)
        self.layers = LayersPage(self.state)
        self.import_page = ImportPage(self.state, node_command)
        self.test = TestPage(self.state, node_command)
        self.result_page = ResultPage(self.state, controller)
        pages: list[QWizardPage] = [
            self.welcome,
            self.hardware,
            self.layers,
            self.import_page,
            self.test,
            self.result_page,
        ]
        for page_id, page in enumerate(pages):
            self.setPage(page_id, page)
            if isinstance(page, ChildPage):
                page.busy_changed.connect(self._refresh_back)
        self.currentIdChanged.connect(self._refresh_back)
        self.resize(620, 460)

    # -- flow -------------------------------------------------------------------

    def initializePage(self, page_id: int) -> None:
        if page_id == self.PAGE_WELCOME and not self.state.sample:
            self._reset_state()
        if page_id == self.PAGE_LAYERS and self.state.hardware and not self.state.sample:
            self.store.save_hardware(self.state.hardware)  # the settings dialog offers its device
        super().initializePage(page_id)

    def nextId(self) -> int:
        current = self.currentId()
        if current == self.PAGE_LAYERS and not self._needs_import():
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

    def _reset_state(self, **values: Any) -> None:
        settings = self.store.load()
        fresh = WizardState(
            model=settings.model,
            tracker_url=settings.tracker_url or None,
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
        if result == QWizard.DialogCode.Accepted and not self.state.sample:
            self.finish()
        super().done(result)

    def finish(self) -> None:
        """Save the tested layers; start contributing with the fresh report when asked."""
        if not self.result_page.passed:
            return
        self.store.update(layers=self.state.layers, memory_cap_mb=self.state.memory_cap_mb)
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
        if name == "result-passed":
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
            "layers": self.PAGE_LAYERS,
            "import": self.PAGE_IMPORT,
            "test": self.PAGE_TEST,
        }.get(name, self.PAGE_RESULT)
        self.setStartId(page_id)
        self.restart()
        self.setStartId(self.PAGE_WELCOME)
        # No history behind a sample page; show Back as a real run would.
        self._sample_back = page_id not in (self.PAGE_WELCOME, self.PAGE_IMPORT, self.PAGE_TEST)
        self.button(QWizard.WizardButton.BackButton).setEnabled(self._sample_back)
        if hardware_page:
            self.hardware.apply_hardware(hardware)
            self.hardware.ok = True
            self.hardware.completeChanged.emit()
        elif name == "import":
            self._sample_progress(self.import_page, 160, "Unpacking the default model…", 275)
        elif name == "test":
            self._sample_progress(
                self.test, 12, "Checking this computer computes its layers correctly…", 19
            )

    @staticmethod
    def _sample_progress(page: ChildPage, done: int, message: str, total: int = 100) -> None:
        page.progress.setVisible(True)
        page.cancel_button.setVisible(True)
        page.show_progress(
            {"kind": "progress", "message": message, "data": {"done": done, "total": total}}
        )


__all__ = ["SAMPLE_HARDWARE", "DoctorWizard"]
