"""The setting "Run batch jobs when not serving": a ``meshnet-node jobs run`` child.

Runs while the setting is on and the node is not serving a route; stops as soon
as Contribute starts (serving comes first), the setting is turned off, or the
app quits. Stopping is SIGTERM (the executor finishes nothing more), then a kill
after a short grace: a task cut short is not lost, its lease expires at the
tracker and another machine resumes it from its last checkpoint.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QObject, QProcess, QTimer, Signal

from app.node_command import jobs_run_argv
from app.ui.errors import guarded

log = logging.getLogger(__name__)

STOP_GRACE_MS = 5000


class BatchJobsSupervisor(QObject):
    running_changed = Signal(bool)

    def __init__(
        self,
        argv_factory: Callable[[Any], Sequence[str]] = jobs_run_argv,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._argv_factory = argv_factory
        self._process: QProcess | None = None
        self._argv: list[str] | None = None
        self._serving = False
        self._settings: Any = None

    @property
    def running(self) -> bool:
        return (
            self._process is not None and self._process.state() != QProcess.ProcessState.NotRunning
        )

    @guarded
    def set_serving(self, serving: bool) -> None:
        self._serving = serving
        self._apply()

    @guarded
    def set_settings(self, settings: Any) -> None:
        self._settings = settings
        self._apply()

    def wanted_argv(self) -> list[str] | None:
        """The command that should run now, or None when no executor should."""
        if self._settings is None or self._serving:
            return None
        if not getattr(self._settings, "run_batch_jobs", False):
            return None
        return list(self._argv_factory(self._settings)) or None  # empty: no network yet

    def _apply(self) -> None:
        wanted = self.wanted_argv()
        if self.running and wanted != self._argv:
            self.stop()
        if wanted is not None and not self.running:
            self._start(wanted)

    def _start(self, argv: list[str]) -> None:
        process = QProcess(self)
        process.setProcessChannelMode(QProcess.ProcessChannelMode.ForwardedErrorChannel)
        process.finished.connect(self._finished)
        process.start(argv[0], argv[1:])
        self._process, self._argv = process, argv
        log.info("batch executor started: %s", " ".join(argv))
        self.running_changed.emit(True)

    def stop(self) -> None:
        process = self._process
        if process is None or process.state() == QProcess.ProcessState.NotRunning:
            return
        process.terminate()
        QTimer.singleShot(STOP_GRACE_MS, process.kill)
        if not process.waitForFinished(STOP_GRACE_MS + 1000):
            process.kill()
            process.waitForFinished(3000)

    @guarded
    def _finished(self, code: int, _status: Any) -> None:
        log.info("batch executor exited with %s", code)
        self._process, self._argv = None, None
        self.running_changed.emit(False)
