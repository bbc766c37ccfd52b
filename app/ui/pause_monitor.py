"""Pause the node while the user needs the computer, and resume it afterwards.

Every probe period (15 s by default) the machine is read off the GUI thread
(``Probes.read`` may scan processes or ask NVML), the pause rules decide
(``app.pause_rules.decide``), and ``PauseTracker``'s hysteresis keeps a
flickering reading from flapping the node: pause at once, resume only after
the rules have been clear for a few probes. "Pause for 1 hour" is a manual
pause with its own timer; while it lasts the rules neither pause nor resume.
The monitor resumes only a pause it made, and does nothing while Contribute
is off.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from app.pause_rules import PauseDecision, PauseTracker, ProbeReadings, Probes, decide
from app.texts import text
from app.ui.controller import NodeController, SettingsSource
from app.ui.errors import guarded
from app.ui.tasks import run_in_background

log = logging.getLogger(__name__)

DEFAULT_PERIOD_MS = 15_000
MANUAL_PAUSE_S = 3600


class PauseMonitor(QObject):
    """Runs the pause rules against the controller's node."""

    manual_pause_changed = Signal(bool)
    decision_changed = Signal(str)  # the sentence of the latest decision

    def __init__(
        self,
        controller: NodeController,
        settings: SettingsSource,
        probes: Probes,
        *,
        period_ms: int = DEFAULT_PERIOD_MS,
        clear_probes: int = 2,
        clock: Callable[[], float] = time.time,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._controller = controller
        self._settings = settings
        self._probes = probes
        self._clock = clock
        self._tracker = PauseTracker(clear_probes=clear_probes)
        self._timer = QTimer(self)
        self._timer.setInterval(period_ms)
        self._timer.timeout.connect(self.probe_now)
        self._manual_timer = QTimer(self)
        self._manual_timer.setSingleShot(True)
        self._manual_timer.timeout.connect(self.resume_now)
        self._in_flight = False
        self._rule_paused = False
        self._manual_until: float | None = None
        self._last_decision: PauseDecision | None = None
        controller.running_changed.connect(self._running_changed)

    # --- reading ---------------------------------------------------------
    @property
    def period_ms(self) -> int:
        return int(self._timer.interval())

    @property
    def paused_by_rule(self) -> bool:
        return self._rule_paused

    @property
    def manual_pause_until(self) -> float | None:
        return self._manual_until

    @property
    def last_decision(self) -> PauseDecision | None:
        return self._last_decision

    # --- control ---------------------------------------------------------
    def start(self) -> None:
        self._timer.start()
        self.probe_now()

    def stop(self) -> None:
        self._timer.stop()

    @guarded
    def probe_now(self) -> None:
        """Read the probes in the background; the decision is applied when they answer."""
        if self._in_flight or not self._controller.running:
            return
        self._in_flight = True
        pid = self._controller.pid
        probes = self._probes

        def read() -> ProbeReadings:
            return probes.read(pid)

        run_in_background(
            read, on_success=self._on_readings, on_failure=self._on_failure, parent=self
        )

    @guarded
    def pause_for(self, seconds: float = MANUAL_PAUSE_S) -> None:
        """The user's "Pause for 1 hour": pause now, resume by itself later."""
        if not self._controller.running:
            return
        self._manual_until = self._clock() + seconds
        until = time.strftime("%H:%M", time.localtime(self._manual_until))
        self._manual_timer.start(max(1, int(seconds * 1000)))
        if not self._rule_paused:
            self._controller.pause(text("pause.hour", until=until))
        self.manual_pause_changed.emit(True)

    @guarded
    def resume_now(self) -> None:
        """End the manual pause; the node resumes unless a rule still asks for a pause."""
        if self._manual_until is None:
            return
        self._manual_until = None
        self._manual_timer.stop()
        self.manual_pause_changed.emit(False)
        decision = self._last_decision
        if decision is not None and decision.pause:
            self._rule_paused = True  # stays paused; the rule's sentence takes over
            self._controller.status.message = decision.sentence
            self._controller.status_changed.emit()
        elif not self._rule_paused:
            self._controller.resume()

    @guarded
    def pause_until_resumed(self, *, until_restart: bool = False) -> None:
        """ "Until I resume" (and "until the computer restarts", which the app also
        remembers for this boot): pause now, with no timer to end it."""
        if not self._controller.running:
            return
        self._manual_until = float("inf")
        self._manual_timer.stop()
        key = "pause.until-restart" if until_restart else "pause.until-resume"
        if not self._rule_paused:
            self._controller.pause(text(key))
        self.manual_pause_changed.emit(True)

    def toggle_manual_pause(self) -> None:
        if self._manual_until is None:
            self.pause_for()
        else:
            self.resume_now()

    # --- decisions -------------------------------------------------------
    @guarded
    def _on_readings(self, readings: Any) -> None:
        self._in_flight = False
        decision = self._tracker.update(decide(self._settings.load(), readings))
        if self._last_decision is None or decision.sentence != self._last_decision.sentence:
            self.decision_changed.emit(decision.sentence)
        self._last_decision = decision
        self._apply(decision)

    def _on_failure(self, exc: BaseException) -> None:
        self._in_flight = False
        log.warning("pause probes failed: %s", exc)

    def _apply(self, decision: PauseDecision) -> None:
        controller = self._controller
        if not controller.running or controller.stopping or self._manual_until is not None:
            return
        if decision.pause and not self._rule_paused:
            log.info("pausing the node: %s", decision.sentence)
            if controller.pause(decision.sentence):
                self._rule_paused = True
        elif not decision.pause and self._rule_paused:
            log.info("resuming the node: no pause rule applies")
            self._rule_paused = False
            controller.resume()

    @guarded
    def _running_changed(self, running: bool) -> None:
        if running:
            self.probe_now()  # a rule that applies now pauses a fresh node at once
            return
        self._tracker.reset()
        self._rule_paused = False
        self._last_decision = None
        if self._manual_until is not None:
            self._manual_until = None
            self._manual_timer.stop()
            self.manual_pause_changed.emit(False)
