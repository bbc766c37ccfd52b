"""The app's commands, held once as QActions.

:class:`AppActions` holds the commands (Contribute, Pause ▸ for how long,
Resume now, Join another network…, Leave this network…, Check this computer…,
Status, What this network serves, Settings, Quit) so
the tray menu and, where no tray exists, the status window's toolbar show
the same actions in the same state.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from app.texts import text
from app.ui.controller import NodeController
from app.ui.errors import guarded


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
        self.contribute = QAction(text("action.contribute"), self)
        self.contribute.setCheckable(True)
        self.contribute.setToolTip(text("action.contribute.tip"))
        # Pause ▸ for 1 hour / until I resume / until the computer restarts; Resume now
        self.pause_menu = QMenu(text("action.pause.menu"))
        self.pause_menu.setToolTipsVisible(True)
        self.pause = self.pause_menu.menuAction()
        self.pause_hour = QAction(text("action.pause.hour"), self)
        self.pause_hour.setToolTip(text("action.pause.tip"))
        self.pause_until_resume = QAction(text("action.pause.until-resume"), self)
        self.pause_until_restart = QAction(text("action.pause.until-restart"), self)
        for choice in (self.pause_hour, self.pause_until_resume, self.pause_until_restart):
            self.pause_menu.addAction(choice)
        self.resume = QAction(text("action.resume"), self)
        self.join_another = QAction(text("action.join-another"), self)
        self.leave = QAction(text("action.leave"), self)
        # the main window's toolbar has room for one word: both network items under it
        self.network_menu = QMenu(text("action.network"))
        self.network_menu.addAction(self.join_another)
        self.network_menu.addAction(self.leave)
        self.doctor = QAction(text("action.check"), self)
        self.doctor.setToolTip(text("action.check.tip"))
        self.status = QAction(text("action.status"), self)
        # "What this network serves" (the network's models); Details keep the recipes
        self.recipes = QAction(text("action.serves"), self)
        self.settings = QAction(text("action.settings"), self)
        self.quit = QAction(text("action.quit"), self)
        self.quit.setToolTip(text("action.quit.tip"))
        self.contribute.triggered.connect(self._contribute_triggered)
        controller.running_changed.connect(self.refresh)
        controller.state_changed.connect(self.refresh)
        self._manual_pause = False
        self.refresh()

    def all(self) -> list[QAction | None]:
        """The menu's order; None marks a separator."""
        return [
            self.contribute,
            self.pause,
            self.resume,
            None,
            self.join_another,
            self.leave,
            None,
            self.doctor,
            self.status,
            self.recipes,
            self.settings,
            None,
            self.quit,
        ]

    def toolbar(self) -> list[QAction | None]:
        """The no-tray main window's toolbar: the menu's commands, the network's two
        under one "Network" button, and not "What this network serves" (a button of
        the window already), so that Quit still fits in German."""
        return [
            self.contribute,
            self.pause,
            self.resume,
            None,
            self.doctor,
            self.settings,
            self.network_menu.menuAction(),
            None,
            self.quit,
        ]

    def set_manual_pause(self, active: bool) -> None:
        """Show "Resume now" instead of Pause while the user's pause lasts."""
        self._manual_pause = active
        self.refresh()

    @guarded
    def refresh(self, *_args: object) -> None:
        controller = self._controller
        self.contribute.setChecked(controller.running and not controller.stopping)
        self.contribute.setEnabled(not controller.stopping)
        serving = controller.running and not controller.stopping
        self.pause.setEnabled(serving and not self._manual_pause)
        self.pause.setVisible(not self._manual_pause)
        self.resume.setVisible(self._manual_pause)
        self.resume.setEnabled(self._manual_pause)

    @guarded
    def _contribute_triggered(self, *_args: object) -> None:
        # triggered is overloaded (with and without "checked"); read the action instead
        self.contribute_requested.emit(self.contribute.isChecked())
