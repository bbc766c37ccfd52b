"""The app's commands, held once as QActions.

:class:`AppActions` holds the commands (Contribute, Pause for 1 hour,
Check this computer…, Status, What this network serves, Settings, Quit) so
the tray menu and, where no tray exists, the status window's toolbar show
the same actions in the same state.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction

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
        self.pause_hour = QAction(text("action.pause"), self)
        self.pause_hour.setToolTip(text("action.pause.tip"))
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
        self.pause_hour.setText(text("action.resume" if self._manual_pause else "action.pause"))
        self.pause_hour.setEnabled(
            self._manual_pause or (controller.running and not controller.stopping)
        )

    @guarded
    def _contribute_triggered(self, *_args: object) -> None:
        # triggered is overloaded (with and without "checked"); read the action instead
        self.contribute_requested.emit(self.contribute.isChecked())
