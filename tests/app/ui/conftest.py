"""Every app a test builds is taken down, in order, before the next test begins.

CI crashed three times in pytest-qt's event processing at the start or end of a
later test (a different one each time): an app of an earlier test, or one of its
windows, was deleted there by the garbage collector or by qtbot, in whatever
order, while a pool job's result or a timer still pointed into it. So each app
a test makes is recorded, and when the test ends: the pool's jobs finish and
their results are delivered, the app shuts down (node child, monitors), its
windows are deleted while the controller and actions they show still live, and
only then the app itself.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, QThreadPool

from app.ui.main import MeshNetApp

POOL_DRAIN_MS = 20_000


@pytest.fixture(autouse=True)
def apps_taken_down_in_order(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> Iterator[list[MeshNetApp]]:
    """Asks for qtbot so that it is torn down before qtbot is."""
    made: list[MeshNetApp] = []
    build = MeshNetApp.__init__

    def recorded(self: MeshNetApp, *args: Any, **kwargs: Any) -> None:
        build(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(MeshNetApp, "__init__", recorded)
    yield made
    take_down(made)


def take_down(apps: list[MeshNetApp]) -> None:
    QThreadPool.globalInstance().waitForDone(POOL_DRAIN_MS)
    QCoreApplication.processEvents()
    for app in apps:
        app.shutdown()
        for window in [*app._windows.values(), app.status_window]:
            with contextlib.suppress(RuntimeError):  # qtbot may have deleted it already
                window.hide()
                window.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    for app in apps:
        app.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QCoreApplication.processEvents()
    apps.clear()
