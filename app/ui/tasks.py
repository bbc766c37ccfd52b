"""The app's one background mechanism: run a blocking call off the GUI thread.

Tracker reads, settings checks and anything else that may block run through
:func:`run_in_background` (as Anki's ``QueryOp`` and Electrum's ``TaskThread``
do), so the window never freezes and no widget is touched from a worker.

How a result gets home: the worker touches no object that could die under it.
It emits one signal on the dispatcher, a single object that lives as long as
the application, and the queued connection carries ``(task id, outcome)`` to
the GUI thread. There the dispatcher looks the task up: a task is a small
QObject child of the caller's ``parent``, so when the parent has been destroyed
the task is gone too and the late result is dropped, not crashed on. Objects
are created and deleted only on the GUI thread, which is what makes this safe:
an earlier design that let the worker own its emitter crashed now and then
when the GUI thread deleted a receiver while the worker was emitting.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, QRunnable, Qt, QThreadPool, Signal, Slot
from shiboken6 import Shiboken

log = logging.getLogger(__name__)

OnSuccess = Callable[[Any], None]
OnFailure = Callable[[BaseException], None]


def _ignore(_result: object) -> None:
    """The callback of a task that has delivered or was discarded."""


class BackgroundTask(QObject):
    """One call's receiving end, on the GUI thread, owned by the caller's parent.

    ``discard()`` drops the result whenever it comes (a newer request replaced
    this one); ``done`` tells whether it was delivered, failed or discarded.
    """

    def __init__(
        self,
        parent: QObject,
        on_success: OnSuccess,
        on_failure: OnFailure | None,
        label: str,
    ) -> None:
        super().__init__(parent)
        self._on_success = on_success
        self._on_failure = on_failure
        self.label = label
        self.done = False

    def discard(self) -> None:
        """Forget this call: its result, when it arrives, goes nowhere."""
        self.done = True

    def take_callbacks(self) -> tuple[OnSuccess, OnFailure | None]:
        """Hand over (and drop) the callbacks once the result is delivered.

        They are usually bound methods of the window that owns this task, and
        may hold the last reference to it: the dispatcher releases them after
        it is done with the task, never inside the task's own code (freeing the
        window there would delete the task under its own feet).
        """
        callbacks = (self._on_success, self._on_failure)
        self._on_success, self._on_failure = _ignore, None
        return callbacks

    def deliver(self, ok: bool, value: object) -> None:
        if self.done:
            return
        self.done = True
        if ok:
            try:
                self._on_success(value)
            except Exception:  # a broken callback must not take the app down
                log.exception("background task %s: on_success failed", self.label)
            return
        assert isinstance(value, BaseException)
        log.warning(
            "background task %s failed: %s",
            self.label,
            value,
            exc_info=(type(value), value, value.__traceback__),
        )
        try:
            if self._on_failure is not None:
                self._on_failure(value)
        except Exception:
            log.exception("background task %s: on_failure failed", self.label)


class _Dispatcher(QObject):
    """Lives as long as the application; the only object a worker ever touches."""

    arrived = Signal(object)

    def __init__(self, parent: QObject | None) -> None:
        super().__init__(parent)
        self.tasks: dict[int, BackgroundTask] = {}
        self.ids = itertools.count(1)
        self.arrived.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    @Slot(object)
    def _deliver(self, message: tuple[int, bool, object]) -> None:
        task_id, ok, value = message
        task = self.tasks.pop(task_id, None)
        if task is None or not Shiboken.isValid(task):
            log.debug("background result dropped: its window is gone")
            return
        task.deliver(ok, value)
        callbacks = task.take_callbacks()
        if Shiboken.isValid(task):
            task.setParent(None)  # spent: freed with its last Python reference
        del task
        del callbacks  # may free a window nobody else holds; nothing of it is in use now


_dispatcher: _Dispatcher | None = None


def _the_dispatcher() -> _Dispatcher:
    global _dispatcher
    if _dispatcher is None or not Shiboken.isValid(_dispatcher):
        _dispatcher = _Dispatcher(QCoreApplication.instance())
    return _dispatcher


class _Job(QRunnable):
    def __init__(self, fn: Callable[[], Any], task_id: int, dispatcher: _Dispatcher) -> None:
        super().__init__()
        self._fn = fn
        self._task_id = task_id
        self._dispatcher = dispatcher

    def run(self) -> None:
        try:
            message = (self._task_id, True, self._fn())
        except BaseException as exc:  # handed to the GUI thread, logged there
            message = (self._task_id, False, exc)
        try:
            self._dispatcher.arrived.emit(message)
        except RuntimeError:  # the application is gone
            log.debug("background result dropped: the application is shutting down")


def run_in_background(
    fn: Callable[[], Any],
    *,
    on_success: OnSuccess,
    on_failure: OnFailure | None = None,
    parent: QObject,
    pool: QThreadPool | None = None,
) -> BackgroundTask:
    """Run ``fn()`` on a pool thread; call ``on_success(result)`` on the GUI thread.

    Must be called from the GUI thread. A failure is logged and handed to
    ``on_failure`` (when given). Returns the task so a caller can ``discard()``
    a result it no longer wants.
    """
    label = getattr(fn, "__qualname__", None) or repr(fn)
    dispatcher = _the_dispatcher()
    task = BackgroundTask(parent, on_success, on_failure, label)
    task_id = next(dispatcher.ids)
    dispatcher.tasks[task_id] = task
    (pool or QThreadPool.globalInstance()).start(_Job(fn, task_id, dispatcher))
    return task
