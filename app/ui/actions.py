"""The app's commands, held once as QActions.

:class:`AppActions` holds the commands (Contribute, Pause for 1 hour,
Run doctor…, Status, Recipes, Settings, Quit) so the tray menu and, where no
tray exists, the status window's toolbar show the same actions in the same
state.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction

from app.ui.controller import NodeController
from app.ui.errors import guarded

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
