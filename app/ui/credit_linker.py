"""Puts the contributor's leaderboard name and team on the tracker (app/credit_link.py).

It tries when the node registers (the controller's ``registration`` gate) and
when the settings change (the wizard's Finish, the settings window's Save),
posting off the GUI thread through ``app.ui.tasks``. A refusal or an
unreachable tracker is logged and said in ``sentence`` (the status window's
Details view shows it); the next registration tries again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.credit_link import (
    LinkWish,
    failure_sentence,
    link_this_computer,
    linked_sentence,
    needs_posting,
)
from app.ui.controller import NodeController
from app.ui.errors import guarded
from app.ui.settings_store import SettingsStore
from app.ui.tasks import BackgroundTask, run_in_background

log = logging.getLogger(__name__)

Link = Callable[[LinkWish], Any]


class CreditLinker(QObject):
    sentence_changed = Signal(str)

    def __init__(
        self,
        store: SettingsStore,
        controller: NodeController,
        *,
        link: Link = link_this_computer,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._store = store
        self._controller = controller
        self._link = link
        self._task: BackgroundTask | None = None
        self._again = False
        self.sentence = ""
        controller.gate_changed.connect(self._gate_changed)
        store.changed.connect(self.link_now)

    @property
    def posting(self) -> bool:
        """True while a claim is on its way to the tracker."""
        return self._task is not None

    def _gate_changed(self, gate: str) -> None:
        if gate == "registration":
            self.link_now()

    def wish(self) -> LinkWish | None:
        settings = self._store.load()
        registration = self._controller.status.registration
        return LinkWish.of(registration, settings.display_name, settings.team)

    @guarded
    def link_now(self, *_args: object) -> None:
        """Post the claim when the tracker does not show what the settings say yet."""
        wish = self.wish()
        if wish is None:
            return
        if not needs_posting(wish, LinkWish.from_record(self._store.credit_link())):
            return
        if self._task is not None:
            self._again = True  # look again once the claim under way has its answer
            return
        link = self._link
        self._task = run_in_background(
            lambda: link(wish),
            on_success=lambda _answer: self._linked(wish),
            on_failure=self._failed,
            parent=self,
        )

    def _linked(self, wish: LinkWish) -> None:
        self._store.save_credit_link(wish.record())
        self._say(linked_sentence(wish))
        self._finished()

    def _failed(self, exc: BaseException) -> None:
        log.warning("the leaderboard name was not linked: %s", exc)
        self._say(failure_sentence(exc))
        self._finished()

    def _finished(self) -> None:
        self._task = None
        if self._again:
            self._again = False
            self.link_now()

    def _say(self, sentence: str) -> None:
        self.sentence = sentence
        self.sentence_changed.emit(sentence)
