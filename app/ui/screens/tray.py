"""The tray icon: the node's state as an icon (colour and shape) and a tooltip
in words, the app's commands (:class:`~app.ui.actions.AppActions`) as its menu,
and the controller's notifications. The tooltip's second line is the credit,
as the status window's credit card last read it (:meth:`Tray.set_credit`).
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from app.credit_summary import CreditSummary
from app.status_model import tooltip_text, tray_state
from app.ui.actions import AppActions
from app.ui.controller import NodeController
from app.ui.errors import guarded
from app.ui.widgets.icons import app_icon, tray_icon

log = logging.getLogger(__name__)


class Tray(QObject):
    """The system-tray icon: state icon, tooltip in words, the menu, notifications."""

    def __init__(
        self, controller: NodeController, actions: AppActions, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._controller = controller
        self.menu = QMenu()
        self.menu.setToolTipsVisible(True)
        # the state in words at the top: some desktops (macOS) never show tray tooltips
        self.state_line = QAction("", self)
        self.state_line.setEnabled(False)
        self.menu.addAction(self.state_line)
        self.menu.addSeparator()
        for action in actions.all():
            if action is None:
                self.menu.addSeparator()
            else:
                self.menu.addAction(action)
        self.icon = QSystemTrayIcon(app_icon(), self)
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._activated)
        self.actions = actions  # keeps the QActions alive as long as the menu
        self._status_action = actions.status
        self._shown_state = ""
        self.credit_line = ""
        controller.status_changed.connect(self.refresh)
        controller.notify.connect(self.show_message)
        self.refresh()

    def show(self) -> None:
        self.icon.show()

    def hide(self) -> None:
        self.icon.hide()

    @property
    def look(self) -> str:
        """The icon shown now: off, starting, serving, paused or error."""
        return self._shown_state

    @guarded
    def refresh(self) -> None:
        status = self._controller.status
        look = tray_state(status.state)
        if look != self._shown_state:
            self.icon.setIcon(tray_icon(look))
            self._shown_state = look
        words = tooltip_text(status)
        self.icon.setToolTip(f"{words}\n{self.credit_line}" if self.credit_line else words)
        line = words.removeprefix("MeshNet — ")
        self.state_line.setText(line[:1].upper() + line[1:])

    @guarded
    def set_credit(self, summary: CreditSummary) -> None:
        self.credit_line = summary.one_line()
        self.refresh()

    @guarded
    def show_message(self, title: str, text: str) -> None:
        if self.icon.isVisible() and QSystemTrayIcon.supportsMessages():
            self.icon.showMessage(title, text, tray_icon(self._shown_state or "off"), 8000)
        log.info("notification: %s — %s", title, text)

    @guarded
    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        # a left click (Windows, most Linux panels) opens the status window;
        # the context menu opens by itself on a right click
        if reason in (
            QSystemTrayIcon.ActivationReason.Trigger,
            QSystemTrayIcon.ActivationReason.DoubleClick,
        ):
            self._status_action.trigger()
