"""The one adapter between the node child and the widgets.

:class:`NodeController` runs ``meshnet-node run --events json`` through
:class:`~app.ui.node_process.NodeProcess`, folds each event into one
:class:`~app.status_model.NodeStatus` and re-emits what changed as Qt signals.
Widgets read ``controller.status``; none of them parses the event stream.

A child that exits without being asked, or with code 2 (refused/error),
becomes a sentence for a banner with Retry (``crashed``), never an exception:
the app outlives every node it runs.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from PySide6.QtCore import QObject, Signal

from app.node_command import child_environment, node_run_argv
from app.status_model import FAILED_STATES, NodeStatus, short_model_name, why_sentence
from app.texts import text
from app.ui.errors import call_safely, guarded
from app.ui.node_process import NodeProcess

log = logging.getLogger(__name__)

DEFAULT_STOP_TIMEOUT_S = 20.0
# A child that dies this many times in a row, never serving in between, is not
# offered Retry again: the user gets one sentence and Copy diagnostics.
CRASHES_BEFORE_GIVING_UP = 2
CRASHED_TWICE = "crashed-twice"
USAGE_SAVE_EVERY_S = 60.0
ArgvFactory = Callable[[str | None], Sequence[str]]


class SettingsSource(Protocol):
    """What the controller needs of ``app.ui.settings_store.SettingsStore``."""

    def load(self) -> Any: ...


def crash_sentence(code: int, last_state: Mapping[str, Any] | None) -> tuple[str, str, str | None]:
    """(state, sentence, reason) to show for a child that exited on its own.

    The node prints its refused/error state (with a sentence written for
    users) before it exits with code 2, so that sentence wins; otherwise the
    exit code is all there is.
    """
    if last_state and last_state.get("state") in FAILED_STATES:
        message = str(last_state.get("message") or "").strip()
        reason = last_state.get("reason")
        if message:
            return str(last_state["state"]), message, reason if isinstance(reason, str) else None
    detail = text("node.crashed.ended") if code < 0 else text("node.crashed.code", code=code)
    sentence = text("node.crashed", detail=detail)
    return "error", sentence, "crashed"


class NodeController(QObject):
    """Start, stop, pause and resume the node child; keep its status model."""

    status_changed = Signal()
    state_changed = Signal(str)
    gate_changed = Signal(str)
    log_line = Signal(str)
    crashed = Signal(str)
    notify = Signal(str, str)
    running_changed = Signal(bool)
    stats_received = Signal(dict)

    def __init__(
        self,
        store: SettingsSource | None = None,
        *,
        argv_factory: ArgvFactory | None = None,
        usage: Any | None = None,
        stop_timeout_s: float = DEFAULT_STOP_TIMEOUT_S,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._store = store
        self._argv_factory = argv_factory
        self._usage = usage
        self.stop_timeout_s = stop_timeout_s
        self._status = NodeStatus()
        self._process = NodeProcess(self)
        self._process.event_received.connect(self.handle_event)
        self._process.log_line.connect(self._on_log_line)
        self._process.exited.connect(self._on_exited)
        self._pause_sentence: str | None = None
        self._restart_after_exit = False
        self._run_id = uuid.uuid4().hex
        self._usage_saved_at = 0.0
        self._resuming = False
        self._started_settings: Any = None
        self.crashes_in_a_row = 0
        changed = getattr(store, "changed", None)
        if changed is not None:
            changed.connect(self._on_settings_changed)

    # --- reading ---------------------------------------------------------
    @property
    def status(self) -> NodeStatus:
        return self._status

    @property
    def running(self) -> bool:
        """True while a node child process exists (whatever its state)."""
        return self._process.running

    @property
    def stopping(self) -> bool:
        return self._process.running and self._process.stop_requested

    @property
    def pid(self) -> int | None:
        return self._process.pid or self._status.pid

    @property
    def paused_by_app(self) -> str | None:
        """The sentence of the pause the app asked for, while it lasts."""
        return self._pause_sentence

    # --- commands --------------------------------------------------------
    def node_argv(self, report_path: str | None = None) -> list[str]:
        if self._argv_factory is not None:
            return list(self._argv_factory(report_path))
        if self._store is None:
            raise RuntimeError("NodeController needs a settings store or an argv factory")
        return node_run_argv(self._store.load(), report_path=report_path)

    @guarded
    def start(self, report_path: str | None = None) -> None:
        """Start contributing; a running but paused node is resumed instead."""
        if self._process.running:
            if self._status.state in ("paused", "pausing") and not self.stopping:
                self.resume()
            return
        self._pause_sentence = None
        self._resuming = False
        self._run_id = uuid.uuid4().hex  # the node's token counter starts again at 0
        self._status.reset_for_start()
        try:
            argv = self.node_argv(report_path)
        except Exception as exc:
            log.exception("could not build the node command")
            self._fail("error", text("node.cannot-start", error=exc), "bad-settings")
            return
        self._started_settings = self._store.load() if self._store is not None else None
        self._status.set_local_state("loading", text("node.starting"))
        self._process.start(argv, child_environment())
        if self._process.running:  # a child that failed to start has already been reported
            self._emit_state()
            self.running_changed.emit(True)

    @guarded
    def stop(self, timeout_s: float | None = None) -> None:
        """Drain sessions, leave the network, exit; killed only after the timeout
        (``stop_timeout_s`` unless a shorter one is given, e.g. when quitting)."""
        self._restart_after_exit = False
        if not self._process.running or self._process.stop_requested:
            return
        self._pause_sentence = None
        self._status.set_local_state("draining", text("node.stopping"))
        self._emit_state()
        limit = self.stop_timeout_s if timeout_s is None else min(timeout_s, self.stop_timeout_s)
        self._process.stop(limit)

    @guarded
    def pause(self, sentence: str = "Paused.") -> bool:
        """Free the GPU for something else; True when a running node was asked to."""
        if not self._process.running or self.stopping:
            return False
        self._pause_sentence = sentence
        if self._process.send("pause"):
            self._status.set_local_state("pausing", sentence)
            self._emit_state()
            return True
        return False

    @guarded
    def resume(self) -> bool:
        if not self._process.running or self.stopping:
            return False
        self._pause_sentence = None
        return self._process.send("resume")

    @guarded
    def request_snapshot(self) -> bool:
        return self._process.send("snapshot")

    @property
    def gave_up(self) -> bool:
        """True after the child crashed twice in a row: no Retry is offered."""
        return self._status.reason == CRASHED_TWICE

    def retry(self) -> None:
        self.start()

    def wait_for_exit(self, timeout_ms: int) -> bool:
        """Block for the child's exit; only for the last moments of shutdown."""
        return self._process.wait_for_exit(timeout_ms)

    def kill(self) -> None:
        self._process.kill()

    # --- events ----------------------------------------------------------
    @guarded
    def handle_event(self, event: dict[str, Any]) -> None:
        """Fold one protocol event into the status and emit what changed.

        Public so the screenshot mode and tests can drive the model directly.
        """
        previous = self._status.state
        changes = self._status.apply(event)
        kind = event.get("kind")
        if kind == "state" and self._status.state == "paused" and self._pause_sentence:
            self._status.message = self._pause_sentence
        if kind == "stats":
            self._record_usage(event)
            self.stats_received.emit(dict(event.get("data") or {}))
        for gate in changes.gates:
            self.gate_changed.emit(gate)
        if changes.state and self._status.state == "serving":
            self.crashes_in_a_row = 0
        if changes.state:
            self.state_changed.emit(self._status.state)
        self.status_changed.emit()
        if kind == "state" and changes.state:
            self._notify_state(previous)
        if changes.recipe_certified and not changes.snapshot:
            model_id = self._status.model_id
            model = short_model_name(model_id) if model_id else "MeshNet"
            self.notify.emit(text("notify.ready"), text("notify.ready.text", model=model))

    def _notify_state(self, previous: str) -> None:
        status = self._status
        if status.state == "serving":
            # a resume passes through loading and the gates again before serving
            again = self._resuming or previous == "reconnecting"
            self._resuming = False
            self.notify.emit(
                text("notify.contributing.again" if again else "notify.contributing"),
                text("notify.contributing.text"),
            )
        elif status.state == "paused":
            self._resuming = True
            self.notify.emit(text("notify.paused"), status.message or text("sentence.paused"))
        elif status.state == "refused":
            self.notify.emit(text("notify.refused"), why_sentence(status))

    def _record_usage(self, event: Mapping[str, Any]) -> None:
        """Feed a stats sample to the usage history (``app.usage_history.UsageHistory``)."""
        if self._usage is None:
            return
        data = event.get("data") or {}
        try:
            tokens = int(data.get("tokens_served", 0))
            at = float(event.get("at") or time.time())
        except (TypeError, ValueError):
            return
        call_safely(self._usage.record, at, tokens, self._run_id)
        if time.monotonic() - self._usage_saved_at >= USAGE_SAVE_EVERY_S:
            self.save_usage()

    def save_usage(self) -> None:
        if self._usage is not None:
            self._usage_saved_at = time.monotonic()
            call_safely(self._usage.save)

    @guarded
    def _on_log_line(self, line: str) -> None:
        self._status.add_log_line(line)
        self.log_line.emit(line)

    @guarded
    def _on_exited(self, code: int, requested: bool) -> None:
        if requested and code == 0:
            self._status.set_local_state("stopped", text("node.off"))
            self._status.pid = None
            self._emit_state()
        elif requested and code < 0:
            self._status.set_local_state("stopped", text("node.off.ended"))
            self._emit_state()
        else:
            state, sentence, reason = crash_sentence(code, self._status.last_state_event)
            if reason == "crashed":
                self.crashes_in_a_row += 1
                if self.crashes_in_a_row >= CRASHES_BEFORE_GIVING_UP:
                    reason = CRASHED_TWICE
            # a refusal was announced when its state event came
            self._fail(state, sentence, reason, notify=state != "refused")
        self.save_usage()
        self.running_changed.emit(False)
        if self._restart_after_exit:
            self._restart_after_exit = False
            self.start()

    def _fail(self, state: str, sentence: str, reason: str | None, *, notify: bool = True) -> None:
        log.warning("node stopped: %s (%s)", sentence, reason)
        self._status.set_local_state(state, sentence, reason)
        self._status.pid = None
        self._emit_state()
        self.crashed.emit(sentence)  # the node's words, for logs and Details
        if notify:  # the notification speaks plainly
            self.notify.emit(text("headline.error"), why_sentence(self._status))

    def _emit_state(self) -> None:
        self.state_changed.emit(self._status.state)
        self.status_changed.emit()

    @guarded
    def _on_settings_changed(self, _settings: Any) -> None:
        """Restart a running node whose command line the new settings change."""
        if not self._process.running or self.stopping or self._started_settings is None:
            return
        if self._argv_factory is not None:
            return
        if node_run_argv(_settings) != node_run_argv(self._started_settings):
            log.info("node settings changed; restarting the node")
            self.stop()
            self._restart_after_exit = True
