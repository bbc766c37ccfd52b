"""One MeshNet app per user: a second launch raises the first one's window and exits.

Two apps would start two nodes for one identity and fight over the tray, so
the first app listens on a per-user local socket (a named pipe on Windows, a
Unix socket elsewhere) and a later launch that can connect to it sends
``raise`` and leaves; a launch with an invite link (``--join``, a ``meshnet://`` link
the OS opened) sends ``join <link>`` instead, so the running app shows it. A socket
left by a crashed app is removed before listening, since nothing answers on it.
"""

from __future__ import annotations

import getpass
import hashlib
import logging

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from app.ui.errors import guarded

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_MS = 1000
RAISE_MESSAGE = b"raise\n"
JOIN_PREFIX = b"join "
MAX_MESSAGE_BYTES = 4096  # an invite link is at most 2048 characters


def default_server_name() -> str:
    """A name unique to this user (and short: Unix socket paths are limited)."""
    try:
        user = getpass.getuser()
    except Exception:  # no user name in this environment
        user = "user"
    digest = hashlib.sha256(user.encode("utf-8", "replace")).hexdigest()[:12]
    return f"meshnet-app-{digest}"


class SingleInstance(QObject):
    """Claim the app for this user, or hand over to the app that has it."""

    raise_requested = Signal()
    join_requested = Signal(str)  # an invite link another launch was given

    def __init__(self, name: str | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name or default_server_name()
        self._server: QLocalServer | None = None
        self._clients: list[QLocalSocket] = []
        self._buffers: dict[int, bytes] = {}

    @property
    def is_primary(self) -> bool:
        return self._server is not None

    def ask_running_instance_to_raise(self, join_link: str | None = None) -> bool:
        """True when another app answered (and was asked to show its window, or the
        join page with ``join_link``)."""
        socket = QLocalSocket()
        socket.connectToServer(self.name)
        if not socket.waitForConnected(CONNECT_TIMEOUT_MS):
            return False
        message = RAISE_MESSAGE
        if join_link:
            one_line = " ".join(join_link.split())  # a link never spans lines
            message = JOIN_PREFIX + one_line.encode("utf-8")[: MAX_MESSAGE_BYTES - 6] + b"\n"
        socket.write(message)
        socket.flush()
        socket.waitForBytesWritten(CONNECT_TIMEOUT_MS)
        socket.disconnectFromServer()
        return True

    def claim(self, join_link: str | None = None) -> bool:
        """Become the one app, or return False after asking the running one to raise
        (or to show ``join_link``)."""
        if self.ask_running_instance_to_raise(join_link):
            log.info("MeshNet is already running; asked it to show its window")
            return False
        QLocalServer.removeServer(self.name)  # a socket a crashed app left behind
        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not server.listen(self.name):
            # Losing a race with a launch at the same moment is fine; anything else
            # is logged and the app runs anyway (better two windows than none).
            log.warning("could not listen on %s: %s", self.name, server.errorString())
            return not self.ask_running_instance_to_raise(join_link)
        server.newConnection.connect(self._accept)
        self._server = server
        return True

    def release(self) -> None:
        for socket in self._clients:
            socket.abort()
        self._clients.clear()
        if self._server is not None:
            self._server.close()
            self._server.deleteLater()
            self._server = None

    @guarded
    def _accept(self) -> None:
        server = self._server
        if server is None:
            return
        while server.hasPendingConnections():
            socket = server.nextPendingConnection()
            self._clients.append(socket)
            socket.readyRead.connect(self._read_all)
            socket.disconnected.connect(self._read_all)
        self._read_all()

    @guarded
    def _read_all(self) -> None:
        """Read every client up to its first line; a client that said it or left is dropped."""
        for socket in list(self._clients):
            key = id(socket)
            data = self._buffers.get(key, b"") + bytes(socket.readAll().data())
            connected = socket.state() == QLocalSocket.LocalSocketState.ConnectedState
            if b"\n" not in data and connected and len(data) < MAX_MESSAGE_BYTES:
                self._buffers[key] = data  # the rest of the line is on its way
                continue
            self._buffers.pop(key, None)
            self._handle(data.partition(b"\n")[0].strip())
            self._clients.remove(socket)
            socket.abort()
            socket.deleteLater()

    def _handle(self, line: bytes) -> None:
        if line.startswith(JOIN_PREFIX):
            link = line[len(JOIN_PREFIX) :].decode("utf-8", "replace").strip()
            log.info("another launch opened an invite link")
            self.join_requested.emit(link)
        elif line == RAISE_MESSAGE.strip():
            log.info("another launch asked to show the window")
            self.raise_requested.emit()
