"""The joined network, live: every screen hears when this computer joins or leaves.

The join page, ``meshnet-node join`` in a terminal and Leave all end in the one
file core.network.joined_network keeps; a ``QFileSystemWatcher`` on it and its folder
(inotify and the like: nothing polls) re-reads it when it changes and emits
``changed`` with the network, or None when none is joined any more.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from app.network_join import APP_PROFILE, joined_network
from app.ui.errors import guarded
from core.network.joined_network import JoinedNetwork, network_file

log = logging.getLogger(__name__)


class JoinedNetworkWatch(QObject):
    """``changed(JoinedNetwork | None)`` whenever the app profile's network changes."""

    changed = Signal(object)

    def __init__(self, profile: str = APP_PROFILE, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._profile = profile
        self._file = network_file(profile)
        self._file.parent.mkdir(parents=True, exist_ok=True)
        self._watcher = QFileSystemWatcher(self)
        self._watcher.addPath(str(self._file.parent))
        self._watcher.directoryChanged.connect(self._soon)
        self._watcher.fileChanged.connect(self._soon)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(50)  # a save is a temporary file and a rename
        self._debounce.timeout.connect(self.reread)
        self.current: JoinedNetwork | None = joined_network(profile)
        self._watch_file()

    def _watch_file(self) -> None:
        # an atomic save replaces the file, and the watch on the old one is gone
        if self._file.exists() and str(self._file) not in self._watcher.files():
            self._watcher.addPath(str(self._file))

    def _soon(self, *_args: object) -> None:
        self._debounce.start()

    @guarded
    def reread(self) -> None:
        self._watch_file()
        now = joined_network(self._profile)
        if now != self.current:
            log.info("joined network is now %s", now.name if now else "none")
            self.current = now
            self.changed.emit(now)


def network_name(joined: JoinedNetwork | None) -> str | None:
    """The name the screens show (its address when the network has no name)."""
    return (joined.name or joined.tracker_url) if joined else None
