"""One one-shot node command (hardware, import, doctor) run as a child process.

The GUI supervises the node; it never hosts it. These commands print their
result on stdout (one JSON document) and their progress on stderr as JSON lines
(``core.events.NodeEvent`` dicts, plus ``{"kind": "report-saved", ...}``) mixed
with plain log lines; we parse what parses and pass the rest on as log lines.

QProcess is asynchronous and delivers on the GUI thread, so reading a child
needs no worker thread. ``cancel()`` asks politely first ("stop" on stdin, then
stdin closed, which the node treats as stop); a child busy in a step that does
not read stdin (importing a model) then gets SIGINT on POSIX (Ctrl-Break on
Windows, app/windows_child.py), which Python turns
into KeyboardInterrupt so the step's cleanup runs (the import removes its
staging folder); only then terminate, and finally kill: a child that ignores
every request still goes away.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import logging
import os
import signal
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal

from app.event_words import child_error_sentence
from app.node_command import child_environment, node_base_argv
from app.ui.node_process import add_creation_flags
from app.windows_child import send_ctrl_break

log = logging.getLogger(__name__)

# Exit code reported when the child crashed, was killed or never started.
EXIT_KILLED = -1


def node_argv(*args: str) -> list[str]:
    """The argv of a ``meshnet-node`` command (this interpreter, or the bundled node)."""
    return [*node_base_argv(), *args]


def last_error_sentence(lines: Iterable[str], fallback: str) -> str:
    """The child's own sentence for a failure: the last ``meshnet-node: ... [reason]``
    line among its log ``lines``, without the prefix and the reason code."""
    for line in reversed(list(lines)):
        if line.startswith("meshnet-node: "):
            return child_error_sentence(line)  # the reason code's sentence, translated
    return fallback


def progress_fraction(event: Mapping[str, Any]) -> tuple[int, int] | None:
    """``(done, total)`` of a progress event whose total is known, else None."""
    data = event.get("data") or {}
    done, total = data.get("done"), data.get("total")
    if isinstance(done, int) and isinstance(total, int) and total > 0:
        return min(done, total), total
    return None


class JsonChild(QObject):
    """Runs one child command; signals each stderr event, each log line and the end.

    Signals:
        event(dict): a stderr line that parsed as a JSON object.
        log_line(str): any other stderr line.
        finished(int, str): exit code (``EXIT_KILLED`` when it did not exit by
            itself) and everything it wrote on stdout.
    """

    # The contract's name; it shadows QObject.event() only for type checkers, Qt still
    # dispatches events to the C++ method.
    event = Signal(dict)  # type: ignore[assignment]
    log_line = Signal(str)
    finished = Signal(int, str)

    def __init__(
        self,
        parent: QObject | None = None,
        *,
        interrupt_after_s: float = 1.0,
        terminate_after_s: float = 4.0,
        kill_after_s: float = 8.0,
    ) -> None:
        super().__init__(parent)
        self._interrupt_after_ms = int(interrupt_after_s * 1000)
        self._terminate_after_ms = int(terminate_after_s * 1000)
        self._kill_after_ms = int(kill_after_s * 1000)
        self._process: QProcess | None = None
        self._stdout = bytearray()
        self._stderr_tail = bytearray()
        self._cancelled = False
        self._ended = False
        self._timers: list[QTimer] = []

    @property
    def running(self) -> bool:
        return self._process is not None and not self._ended

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def start(self, argv: Sequence[str], env: Mapping[str, str] | None = None) -> None:
        """Start ``argv``; a child may be started once per JsonChild.

        The environment defaults to ``child_environment()``: unbuffered output,
        so progress lines arrive while they happen, not when the child exits.
        """
        if self._process is not None:
            raise RuntimeError("JsonChild runs one command; make a new one for the next")
        process = QProcess(self)
        environment = QProcessEnvironment()
        for key, value in (child_environment() if env is None else env).items():
            environment.insert(key, value)
        process.setProcessEnvironment(environment)
        process.setProgram(argv[0])
        process.setArguments(list(argv[1:]))
        process.setProcessChannelMode(QProcess.ProcessChannelMode.SeparateChannels)
        process.readyReadStandardOutput.connect(self._read_stdout)
        process.readyReadStandardError.connect(self._read_stderr)
        process.finished.connect(self._on_finished)
        process.errorOccurred.connect(self._on_error)
        self._process = process
        log.info("starting child: %s", " ".join(argv))
        add_creation_flags(process)
        process.start()

    def cancel(self) -> None:
        """Ask the child to stop; terminate and then kill it if it does not."""
        process = self._process
        if process is None or self._ended:
            return
        self._cancelled = True
        if process.state() == QProcess.ProcessState.NotRunning:
            return
        process.write(b"stop\n")
        process.closeWriteChannel()
        self._after(self._interrupt_after_ms, self._interrupt)
        self._after(self._terminate_after_ms, process.terminate)
        self._after(self._kill_after_ms, process.kill)

    def _interrupt(self) -> None:
        """SIGINT: Python raises KeyboardInterrupt in the child, so cleanups run."""
        assert self._process is not None
        pid = self._process.processId()
        if pid <= 0:
            return
        if os.name == "nt":  # no POSIX signals: Ctrl-Break, which Python raises as SIGBREAK
            with contextlib.suppress(OSError, AttributeError):
                send_ctrl_break(pid, ctypes.WinDLL("kernel32"))  # type: ignore[attr-defined]
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGINT)

    def _after(self, ms: int, action: object) -> None:
        timer = QTimer(self)
        timer.setSingleShot(True)

        def fire() -> None:
            if self._process is not None and not self._ended:
                action()  # type: ignore[operator]

        timer.timeout.connect(fire)
        timer.start(ms)
        self._timers.append(timer)

    def _read_stdout(self) -> None:
        assert self._process is not None
        self._stdout += bytes(self._process.readAllStandardOutput().data())

    def _read_stderr(self) -> None:
        assert self._process is not None
        self._stderr_tail += bytes(self._process.readAllStandardError().data())
        *lines, rest = self._stderr_tail.split(b"\n")
        self._stderr_tail = bytearray(rest)
        for line in lines:
            self._emit_line(line)

    def _emit_line(self, raw: bytes | bytearray) -> None:
        line = raw.decode("utf-8", errors="replace").strip()
        if not line:
            return
        if line.startswith("{"):
            try:
                parsed = json.loads(line)
            except json.JSONDecodeError:
                parsed = None
            if isinstance(parsed, dict):
                self.event.emit(parsed)
                return
        self.log_line.emit(line)

    def _on_finished(self, exit_code: int, status: QProcess.ExitStatus) -> None:
        self._read_stdout()
        self._read_stderr()
        if self._stderr_tail:
            self._emit_line(bytes(self._stderr_tail))
            self._stderr_tail.clear()
        crashed = status == QProcess.ExitStatus.CrashExit
        self._end(EXIT_KILLED if crashed else exit_code)

    def _on_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            assert self._process is not None
            self.log_line.emit(f"could not start {self._process.program()}: {error.name}")
            self._end(EXIT_KILLED)

    def _end(self, exit_code: int) -> None:
        if self._ended:
            return
        self._ended = True
        for timer in self._timers:
            timer.stop()
        stdout = self._stdout.decode("utf-8", errors="replace")
        log.info("child finished with %s (cancelled: %s)", exit_code, self._cancelled)
        self.finished.emit(exit_code, stdout)
