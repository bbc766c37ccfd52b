"""The tray's notifications for ``--screenshot``'s texts.json (issue 37).

A notification is no widget, so ``visible_texts`` never sees one. Here a real
``NodeController`` with a real ``Tray`` hears the events of a node that starts
serving, is made ready, is paused at the user's request, serves again, is refused
and at last stops unexpectedly; every (title, text) the tray is told to show is
collected, in the order shown, so the plain-words and translation checks read them
like any screen's words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.texts import text
from app.ui.actions import AppActions
from app.ui.controller import NodeController
from app.ui.screens.tray import Tray
from app.ui.settings_store import SettingsStore


def _state(state: str, message: str, at: float, reason: str | None = None) -> dict[str, Any]:
    return {"kind": "state", "state": state, "message": message, "reason": reason, "at": at}


def tray_notifications(
    store: SettingsStore,
    keep: Callable[[Any], Any],
    serving: list[dict[str, Any]],
    refused: list[dict[str, Any]],
) -> list[str]:
    """Each notification's title, then its text, as the tray would show them, for a node
    that says the sample events ``serving``, is paused and resumed, says ``refused``,
    serves again and crashes (passed in: app.ui.screenshots imports this module)."""
    controller = keep(NodeController(store))
    tray = keep(Tray(controller, keep(AppActions(controller))))
    shown: list[str] = []
    controller.notify.connect(lambda title, words: shown.extend([title, words]))
    now = max(float(event["at"]) for event in serving)
    for event in serving:  # contributing; the model's recipe certified: ready
        controller.handle_event(event)
    # paused as the app pauses it: its own sentence (controller.pause) on the node's event
    controller.handle_event(_state("paused", text("pause.until-resume"), now + 1))
    controller.handle_event(_state("loading", "", now + 2))
    controller.handle_event(_state("serving", "Serving layers 0–15", now + 3))
    for event in refused:
        controller.handle_event(event)
    controller.handle_event(_state("serving", "Serving layers 0–15", now + 5))
    controller._on_exited(1, False)  # what the node child's unexpected exit calls
    tray.hide()
    return shown
