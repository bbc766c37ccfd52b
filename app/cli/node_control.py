"""How a supervising app talks to `meshnet-node run`: event lines out, commands in.

Out: one JSON object per line on stdout (``NodeEvent.to_dict()``), or the
human text form. In: one command per line on stdin — ``stop``, ``pause``,
``resume``, ``snapshot``, as a plain word or ``{"command": "..."}`` — read
only with ``--control stdin``, the flag the app passes. Stdin is the app's
protocol, not a default: a node started by a script, a process supervisor or a
``Popen`` whose inherited pipe reaches its end must keep serving until it is
signalled. With ``--control stdin`` the end of the pipe means ``stop`` (an app
that dies, even by kill -9, closes the pipe, and its node leaves the network
instead of staying registered as an orphan), and the stop says so. Signals that
ask a process to end (SIGTERM, SIGINT, and SIGBREAK on Windows, where a
console's Ctrl-Break is the only such signal) are ``stop`` always; on Windows
the app sends Ctrl-Break only to a child that ignored the pipe, and holds it
in a Job Object that dies with the app (app/windows_child.py).
"""

from __future__ import annotations

import argparse
import json
import logging
import queue
import signal
import sys
import threading
from typing import IO, Any

from core.events import NodeEvent
from core.progress import CancelToken

log = logging.getLogger(__name__)

COMMANDS = ("stop", "pause", "resume", "snapshot")
# Put on the queue when a controlling stdin ends: a stop that can say why.
STDIN_ENDED = "__stdin-ended__"
CONTROL_NONE = "none"
CONTROL_STDIN = "stdin"
REASON_STDIN_CLOSED = "stdin-closed"
STDIN_ENDED_WHY = (
    "stdin ended, and with --control stdin the end of stdin means stop (the app that "
    "started this process closed its pipe or went away)"
)


def add_control_argument(parser: argparse.ArgumentParser) -> None:
    """``--control stdin``: obey commands on stdin, and stop when it ends (the app's flag)."""
    parser.add_argument(
        "--control",
        choices=(CONTROL_NONE, CONTROL_STDIN),
        default=CONTROL_NONE,
        help="stdin: read stop/pause/resume/snapshot from stdin and stop when it ends "
        "(how the app runs its children); none (default): ignore stdin and run until "
        "SIGTERM or Ctrl-C",
    )


def stdin_controls(args: argparse.Namespace) -> bool:
    return getattr(args, "control", CONTROL_NONE) == CONTROL_STDIN


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
        """Feed commands from ``stream`` on a daemon thread; its end is :data:`STDIN_ENDED`."""

        def read() -> None:
            try:
                for line in stream:
                    command = parse_command(line)
                    if command is not None:
                        self.put(command)
            except (OSError, ValueError) as exc:
                log.info("stdin closed: %s", exc)
            self.put(STDIN_ENDED)

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


def cancel_on_stop(
    token: CancelToken, platform: str = sys.platform, *, stdin_control: bool = False
) -> None:
    """Let one-shot commands (doctor, import) be stopped as ``run`` is.

    A stop signal sets ``token``, and with ``stdin_control`` (``--control
    stdin``) so do a ``stop`` line and the end of stdin (the stop then says
    why); the running step ends at its next progress point and cleans up (an
    import removes its staging folder) instead of dying half-way.
    """
    commands = CommandQueue()
    commands.install_signals(platform)
    if stdin_control:
        commands.read_stdin(sys.stdin)

    def watch() -> None:
        while True:
            command = commands.get(3600.0)
            if command == STDIN_ENDED:
                token.cancel(STDIN_ENDED_WHY)
                return
            if command == "stop":
                token.cancel()
                return

    threading.Thread(target=watch, name="meshnet-stop-watch", daemon=True).start()
