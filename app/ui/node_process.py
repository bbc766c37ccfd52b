"""One ``meshnet-node run --events json`` child over QProcess, split into lines.

The process layer knows the protocol's framing, not its meaning: every stdout
line that parses as a JSON object becomes ``event_received(dict)``, other stdout and
every stderr line become ``log_line(str)``. Stopping is a ``stop`` command on
stdin followed by closing it (EOF is a stop too); only when the child has not
exited after the timeout is it killed, because a killed node leaves its
registration to expire at the tracker instead of deregistering. On Windows
(app/windows_child.py) the child starts in a process group of its own and in
a Job Object that dies with the app, and a child that ignores the pipe gets
Ctrl-Break before it is killed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal

from app.texts import text
from app.ui.errors import guarded
from app.windows_child import ChildHolder, child_holder, creation_flags

log = logging.getLogger(__name__)

MAX_LINE_BYTES = 1 << 20  # a line longer than this is not protocol: cut it into log text
INTERRUPT_GRACE_MS = 5000  # after Ctrl-Break, how long a child has before it is killed


class LineSplitter:
    """Bytes in, complete decoded lines out; keeps the unfinished tail."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, data: bytes) -> list[str]:
        self._buffer += data
        *lines, self._buffer = self._buffer.split(b"\n")
        if len(self._buffer) > MAX_LINE_BYTES:
            lines.append(self._buffer)
            self._buffer = b""
        return [line.decode("utf-8", "replace").rstrip("\r") for line in lines]

    def flush(self) -> list[str]:
        rest, self._buffer = self._buffer, b""
        return [rest.decode("utf-8", "replace").rstrip("\r")] if rest.strip() else []


def parse_event_line(line: str) -> dict[str, object] | None:
    """A protocol event, or None when the line is plain text."""
    text = line.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) and isinstance(value.get("kind"), str) else None


class NodeProcess(QObject):
    """A supervised node child: start, send commands, stop with a kill timeout."""

    started = Signal()
    event_received = Signal(dict)
    log_line = Signal(str)
    # exit code (-1 when it could not start or was killed), and whether the
    # app asked it to stop before it exited
    exited = Signal(int, bool)

    def __init__(self, parent: QObject | None = None, holder: ChildHolder | None = None) -> None:
        super().__init__(parent)
        self._holder = holder if holder is not None else child_holder()
        self._interrupted = False
        self._process: QProcess | None = None
        self._stdout = LineSplitter()
        self._stderr = LineSplitter()
        self._stop_requested = False
        self._kill_timer = QTimer(self)
        self._kill_timer.setSingleShot(True)
        self._kill_timer.timeout.connect(self._kill_after_timeout)

    @property
    def running(self) -> bool:
        return self._process is not None

    @property
    def pid(self) -> int | None:
        if self._process is None:
            return None
        pid = int(self._process.processId())
        return pid or None

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested

    def start(self, argv: Sequence[str], env: Mapping[str, str] | None = None) -> None:
        if self._process is not None:
            raise RuntimeError("the node child is already running")
        process = QProcess(self)
        process.setProcessChannelMode(QProcess.ProcessChannelMode.SeparateChannels)
        if env is not None:
            environment = QProcessEnvironment()
            for key, value in env.items():
                environment.insert(key, value)
            process.setProcessEnvironment(environment)
        process.readyReadStandardOutput.connect(self._read_stdout)
        process.readyReadStandardError.connect(self._read_stderr)
        process.finished.connect(self._finished)
        process.errorOccurred.connect(self._error)
        process.started.connect(self._hold)
        process.started.connect(self.started)
        add_creation_flags(process)
        self._process = process
        self._stop_requested = False
        self._interrupted = False
        self._stdout, self._stderr = LineSplitter(), LineSplitter()
        log.info("starting node child: %s", " ".join(argv))
        process.start(argv[0], list(argv[1:]))

    def send(self, command: str) -> bool:
        """Write one command line to the child's stdin; False when there is no child."""
        if self._process is None or self._process.state() == QProcess.ProcessState.NotRunning:
            return False
        written = self._process.write((command.strip() + "\n").encode())
        return bool(written is not None and int(written) > 0)

    def stop(self, timeout_s: float = 20.0) -> None:
        """Ask the child to drain and exit; kill it only if it has not after ``timeout_s``."""
        if self._process is None or self._stop_requested:
            return
        self._stop_requested = True
        self.send("stop")
        self._process.closeWriteChannel()
        self._kill_timer.start(max(1, int(timeout_s * 1000)))

    def kill(self) -> None:
        if self._process is not None:
            self._stop_requested = True
            self._process.kill()

    def wait_for_exit(self, timeout_ms: int) -> bool:
        """Block until the child exits (used only at application shutdown)."""
        if self._process is None:
            return True
        return bool(self._process.waitForFinished(timeout_ms))

    def close(self) -> None:
        """The app is quitting: release the job (on Windows, any child left dies with it)."""
        self._holder.close()

    @guarded
    def _hold(self) -> None:
        pid = self.pid
        if pid is not None:
            self._holder.hold(pid)

    @guarded
    def _kill_after_timeout(self) -> None:
        pid = self.pid
        if self._process is not None and pid is not None and not self._interrupted:
            self._interrupted = True
            if self._holder.interrupt(pid):  # Windows: Ctrl-Break, the SIGBREAK stop
                log.warning("the node child did not stop in time; sent it Ctrl-Break")
                self._kill_timer.start(INTERRUPT_GRACE_MS)
                return
        if self._process is not None:
            log.warning("the node child did not stop in time; killing it")
            self.log_line.emit(text("node.killed"))
            self._process.kill()

    @guarded
    def _read_stdout(self) -> None:
        if self._process is None:
            return
        for line in self._stdout.feed(bytes(self._process.readAllStandardOutput().data())):
            self._dispatch(line)

    @guarded
    def _read_stderr(self) -> None:
        if self._process is None:
            return
        for line in self._stderr.feed(bytes(self._process.readAllStandardError().data())):
            if line.strip():
                self.log_line.emit(line)

    def _dispatch(self, line: str) -> None:
        event = parse_event_line(line)
        if event is not None:
            self.event_received.emit(event)
        elif line.strip():
            self.log_line.emit(line)

    @guarded
    def _finished(self, exit_code: int, exit_status: QProcess.ExitStatus) -> None:
        self._read_stdout()
        self._read_stderr()
        for line in self._stdout.flush():
            self._dispatch(line)
        for line in self._stderr.flush():
            self.log_line.emit(line)
        code = int(exit_code) if exit_status == QProcess.ExitStatus.NormalExit else -1
        self._end(code)

    @guarded
    def _error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart and self._process is not None:
            self.log_line.emit(text("node.start-failed", error=self._process.errorString()))
            self._end(-1)

    def _end(self, code: int) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        self._kill_timer.stop()
        requested = self._stop_requested
        log.info("node child exited with code %s (stop requested: %s)", code, requested)
        process.deleteLater()
        self.exited.emit(code, requested)


def add_creation_flags(process: QProcess) -> None:
    """Windows: start the child in a process group of its own (Ctrl-Break reaches it alone).

    ``setCreateProcessArgumentsModifier`` exists only in Qt's Windows build."""
    flags = creation_flags()
    modifier = getattr(process, "setCreateProcessArgumentsModifier", None)
    if not flags or modifier is None:
        return

    def add(arguments: object) -> None:
        arguments.flags |= flags  # type: ignore[attr-defined]

    modifier(add)
