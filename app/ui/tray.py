"""The tray icon and the app's commands.

:class:`AppActions` holds the commands once (Contribute, Pause for 1 hour,
Run doctor…, Status, Recipes, Settings, Quit) so the tray menu and, where no
tray exists, the status window's toolbar show the same actions in the same
state. :class:`Tray` shows the node's state as an icon (colour and shape) and
a tooltip in words, and pops the controller's notifications.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from app.status_model import tooltip_text, tray_state
from app.ui.controller import NodeController
from app.ui.errors import guarded
from app.ui.icons import app_icon, tray_icon

log = logging.getLogger(__name__)

PAUSE_TEXT = "Pause for 1 hour"
RESUME_TEXT = "Resume now"


class AppActions(QObject):
    """Every command a user can give, as QActions shared by tray and windows.

    ``contribute`` is checkable and mirrors whether a node child runs; its
    ``triggered(bool)`` is the user's wish (``contribute_requested``), never
    the echo of a state change.
    """

    contribute_requested = Signal(bool)

    def __init__(self, controller: NodeController, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self.contribute = QAction("Contribute", self)
        self.contribute.setCheckable(True)
        self.contribute.setToolTip("Lend this computer to the network, or stop lending it")
        self.pause_hour = QAction(PAUSE_TEXT, self)
        self.pause_hour.setToolTip("Stop contributing for an hour, then carry on by itself")
        self.doctor = QAction("Run doctor…", self)
        self.doctor.setToolTip("Test what this computer can serve")
        self.status = QAction("Status", self)
        self.recipes = QAction("Recipes", self)
        self.settings = QAction("Settings", self)
        self.quit = QAction("Quit", self)
        self.quit.setToolTip("Stop contributing and close MeshNet")
        self.contribute.triggered.connect(self._contribute_triggered)
        controller.running_changed.connect(self.refresh)
        controller.state_changed.connect(self.refresh)
        self._manual_pause = False
        self.refresh()

    def all(self) -> list[QAction | None]:
        """The menu's order; None marks a separator."""
        return [
            self.contribute,
            self.pause_hour,
            None,
            self.doctor,
            self.status,
            self.recipes,
            self.settings,
            None,
            self.quit,
        ]

    def set_manual_pause(self, active: bool) -> None:
        """Show "Resume now" while the 1-hour pause lasts."""
        self._manual_pause = active
        self.refresh()

    @guarded
    def refresh(self, *_args: object) -> None:
        controller = self._controller
        self.contribute.setChecked(controller.running and not controller.stopping)
        self.contribute.setEnabled(not controller.stopping)
        self.pause_hour.setText(RESUME_TEXT if self._manual_pause else PAUSE_TEXT)
        self.pause_hour.setEnabled(
            self._manual_pause or (controller.running and not controller.stopping)
        )

    @guarded
    def _contribute_triggered(self, *_args: object) -> None:
        # triggered is overloaded (with and without "checked"); read the action instead
        self.contribute_requested.emit(self.contribute.isChecked())


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
        self.icon.setToolTip(words)
        line = words.removeprefix("MeshNet — ")
        self.state_line.setText(line[:1].upper() + line[1:])

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
