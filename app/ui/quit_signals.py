"""SIGTERM (and SIGINT, SIGHUP) quit the app the way its Quit command does.

Python runs a signal handler only when the interpreter next gets control, and
inside Qt's event loop that may be never. So the C-level handler writes a byte
to a socket (``signal.set_wakeup_fd``) that a ``QSocketNotifier`` watches: the
loop wakes, the Python handler runs, and the quit is queued. Nothing polls, so
an idle app stays idle.
"""

from __future__ import annotations

import logging
import signal
import socket
from collections.abc import Callable

from PySide6.QtCore import QObject, QSocketNotifier, QTimer

log = logging.getLogger(__name__)

QUIT_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name)
)


class QuitOnSignal(QObject):
    """Calls ``quit`` (once per signal, on the event loop) when a quit signal arrives."""

    def __init__(self, quit: Callable[[], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._quit = quit
        self._reader, self._writer = socket.socketpair()
        for end in (self._reader, self._writer):
            end.setblocking(False)
        self._previous_fd = signal.set_wakeup_fd(self._writer.fileno())
        self._notifier = QSocketNotifier(self._reader.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._drain)
        self._previous = {number: signal.signal(number, self._handle) for number in QUIT_SIGNALS}

    def _handle(self, number: int, _frame: object) -> None:
        log.info("signal %s: quitting", signal.Signals(number).name)
        QTimer.singleShot(0, self._quit)

    def _drain(self) -> None:
        # the bytes only woke the loop; the Python handler has run by now
        try:
            while self._reader.recv(64):
                pass
        except (BlockingIOError, InterruptedError):
            pass

    def uninstall(self) -> None:
        for number, previous in self._previous.items():
            signal.signal(number, previous)
        signal.set_wakeup_fd(self._previous_fd)
        self._notifier.setEnabled(False)
        self._reader.close()
        self._writer.close()
