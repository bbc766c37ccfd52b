"""How a supervising app talks to `meshnet-node run`: event lines out, commands in.

Out: one JSON object per line on stdout (``NodeEvent.to_dict()``), or the
human text form. In: one command per line on stdin — ``stop``, ``pause``,
``resume``, ``snapshot``, as a plain word or ``{"command": "..."}`` — read
only when stdin is a pipe, so a node started from a terminal or with stdin on
/dev/null (the demo) is not stopped by an empty stdin. End of the pipe means
``stop``: an app that dies (even by kill -9) closes the pipe, and its node
leaves the network instead of staying registered as an orphan. Signals that
ask a process to end (SIGTERM, SIGINT, and SIGBREAK on Windows, where a
console's Ctrl-Break is the only such signal) are ``stop`` too.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import signal
import stat
import sys
import threading
from typing import IO, Any

from core.events import NodeEvent
from core.progress import CancelToken

log = logging.getLogger(__name__)

COMMANDS = ("stop", "pause", "resume", "snapshot")


class EventPrinter:
    """Serialises events from any thread, one whole line at a time."""

    def __init__(self, style: str, out: IO[str] | None = None) -> None:
        self._style = style
        self._out = out
        self._lock = threading.Lock()
        self._progress: tuple[str, str] | None = None  # the step the last progress line was

    def __call__(self, event: NodeEvent) -> None:
        out = self._out or sys.stdout
        with self._lock:
            line = self.render(event)
            if line is None:
                return
            try:
                out.write(line + "\n")
                out.flush()
            except (OSError, ValueError):  # the reader went away; the stop comes by EOF
                pass

    def render(self, event: NodeEvent) -> str | None:
        if self._style == "json":
            return json.dumps(event.to_dict(), default=str)
        if event.kind == "state":
            reason = f" [{event.reason}]" if event.reason else ""
            return f"[{event.state}] {event.message}{reason}"
        if event.kind == "gate":
            return f"  {event.gate}: {event.gate_state} — {event.message}"
        if event.kind == "progress":
            data = event.data
            done, total = data.get("done"), data.get("total")
            step = (str(data.get("stage")), event.message)
            starts, self._progress = step != self._progress, step
            if not starts and done != total:
                return None  # a line when a step starts and when it ends, not one per layer
            return f"  {event.message} {done}/{total}"
        return None


def parse_command(line: str) -> str | None:
    """A command word from one stdin line; None for anything else (logged, ignored)."""
    text = line.strip()
    if not text:
        return None
    if text.startswith("{"):
        try:
            value: Any = json.loads(text)
        except ValueError:
            value = None
        text = str(value.get("command", "")) if isinstance(value, dict) else ""
    word = text.strip().lower()
    if word in COMMANDS:
        return word
    log.warning("ignoring an unknown command on stdin: %r", line.strip()[:80])
    return None


def stdin_is_pipe(stream: IO[str] | None = None) -> bool:
    """True when stdin is a pipe (an app's QProcess or Popen(stdin=PIPE)), on every OS.

    On Windows, os.fstat reports anonymous and named pipes as FIFOs too.
    """
    stream = stream if stream is not None else sys.stdin
    if stream is None:
        return False
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def stop_signals(platform: str = sys.platform) -> list[signal.Signals]:
    """The signals that mean "stop" on this OS."""
    names = ["SIGTERM", "SIGINT"]
    if platform == "win32":
        names.append("SIGBREAK")
    return [getattr(signal, name) for name in names if hasattr(signal, name)]


class CommandQueue:
    """Commands from stdin and signals, consumed by the main thread in order."""

    def __init__(self) -> None:
        self._queue: queue.Queue[str] = queue.Queue()

    def put(self, command: str) -> None:
        self._queue.put(command)

    def get(self, timeout_s: float) -> str | None:
        try:
            return self._queue.get(timeout=timeout_s)
        except queue.Empty:
            return None

    def read_stdin(self, stream: IO[str]) -> threading.Thread:
        """Feed commands from ``stream`` on a daemon thread; its end is a ``stop``."""

        def read() -> None:
            try:
                for line in stream:
                    command = parse_command(line)
                    if command is not None:
                        self.put(command)
            except (OSError, ValueError) as exc:
                log.info("stdin closed: %s", exc)
            self.put("stop")

        reader = threading.Thread(target=read, name="meshnet-stdin", daemon=True)
        reader.start()
        return reader

    def install_signals(self, platform: str = sys.platform) -> None:
        def on_signal(_signum: int, _frame: object) -> None:
            self.put("stop")

        for signum in stop_signals(platform):
            try:
                signal.signal(signum, on_signal)
            except (OSError, ValueError, RuntimeError):  # not the main thread, or not allowed
                log.debug("cannot handle %s here", signum)


def cancel_on_stop(token: CancelToken, platform: str = sys.platform) -> None:
    """Let one-shot commands (doctor, import) be stopped as ``run`` is.

    A ``stop`` line on a stdin pipe, the pipe's end, or a stop signal sets
    ``token``; the running step ends at its next progress point and cleans up
    (an import removes its staging folder) instead of dying half-way.
    """
    commands = CommandQueue()
    commands.install_signals(platform)
    if stdin_is_pipe():
        commands.read_stdin(sys.stdin)

    def watch() -> None:
        while True:
            if commands.get(3600.0) == "stop":
                token.cancel()
                return

    threading.Thread(target=watch, name="meshnet-stop-watch", daemon=True).start()
