"""``meshnet://`` links the OS hands to the app as an event (macOS: the app's
``CFBundleURLTypes``), not as ``--join`` on the command line.

macOS starts the app once and delivers every opened link as a ``QFileOpenEvent`` to
the application object; this filter turns those into ``link_opened(str)``, the same
path as a link forwarded by a second launch (app/ui/single_instance.py).
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtGui import QFileOpenEvent

log = logging.getLogger(__name__)

LINK_SCHEME = "meshnet"


class LinkOpenFilter(QObject):
    """Install on the QApplication; emits each opened ``meshnet://`` link."""

    link_opened = Signal(str)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.FileOpen and isinstance(event, QFileOpenEvent):
            url = event.url()
            if url.scheme() == LINK_SCHEME:
                log.info("the system opened an invite link")
                self.link_opened.emit(url.toString())
                return True
        return super().eventFilter(watched, event)
