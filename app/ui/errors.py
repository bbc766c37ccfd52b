"""The one path errors take in the GUI: guarded slots, show_error, the excepthook.

A tray app that dies takes the user's contribution with it and tells them
nothing, so no exception may escape a slot: :func:`guarded` logs it and
shows a short apology. Errors meant for users (``core.errors.MeshnetError``,
``app.errors.TrackerReadError``: anything with a ``sentence`` or a
plain message written for people) show their own words; cancellations are
silent; anything else is logged with a pointer to the log file.
"""

from __future__ import annotations

import functools
import logging
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, ParamSpec, TypeVar

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from app.texts import plain, text

log = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

_log_file: Path | None = None
_showing = False


def set_log_file(path: Path | None) -> None:
    """Where the apology tells the user the details are."""
    global _log_file
    _log_file = path


def apology() -> str:
    """The short apology for an unexpected error, in the chosen language; it names the
    Details view's Copy diagnostics button by its translated label."""
    sentence = text("apology", copy=plain("details.copy"))
    return f"{sentence} {text('apology.where', path=_log_file)}" if _log_file else sentence


def _is_cancellation(exc: BaseException) -> bool:
    return type(exc).__name__ in {"CancelledError", "Cancelled", "KeyboardInterrupt"}


def user_sentence(exc: BaseException) -> str | None:
    """The words an error carries for users, or None for a programming error."""
    sentence = getattr(exc, "sentence", None)
    if isinstance(sentence, str) and sentence:
        return sentence
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & {"MeshnetError", "TrackerReadError", "UserFacingError"} and str(exc):
        return str(exc)
    return None


def show_error(parent: QWidget | None, exc: BaseException, *, title: str = "MeshNet") -> None:
    """Tell the user about ``exc`` in one sentence; never raises."""
    global _showing
    if _is_cancellation(exc):
        return
    sentence = user_sentence(exc)
    if sentence is None:
        log.error("unexpected error", exc_info=(type(exc), exc, exc.__traceback__))
        sentence = apology()
    if _showing or QApplication.instance() is None:
        return  # one box at a time: an error while showing an error must not cascade
    _showing = True
    try:
        box = QMessageBox(QMessageBox.Icon.Warning, title, sentence, parent=parent)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    except Exception:  # pragma: no cover - a broken box must not raise
        log.exception("could not build the error box")
        _showing = False
        return
    box.finished.connect(_box_closed)
    box.open()


def _box_closed(_result: int) -> None:
    global _showing
    _showing = False


def guarded(fn: Callable[P, R]) -> Callable[P, R | None]:
    """Decorate a slot so an exception in it is logged and shown, never raised into Qt."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R | None:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            log.exception("error in %s", getattr(fn, "__qualname__", fn))
            parent = args[0] if args and isinstance(args[0], QWidget) else None
            QTimer.singleShot(0, lambda error=exc: show_error(parent, error))
            return None

    return wrapper


def install_excepthook() -> None:
    """Route uncaught exceptions (Qt swallows them into stderr) to the log and a sentence."""

    def hook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            app = QApplication.instance()
            if app is not None:
                app.quit()
            return
        log.critical("uncaught exception", exc_info=(exc_type, exc, tb))
        try:
            show_error(None, exc)
        except Exception:  # pragma: no cover - the hook itself must never raise
            log.exception("could not show the uncaught exception")

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        # no widget may be touched from another thread: log only
        log.critical(
            "uncaught exception in thread %s",
            getattr(args.thread, "name", "?"),
            exc_info=(args.exc_type, args.exc_value or args.exc_type(), args.exc_traceback),
        )

    sys.excepthook = hook
    threading.excepthook = thread_hook


def call_safely(fn: Callable[..., Any], *args: Any) -> None:
    """Call a callback that is not ours (a subscriber), logging what it raises."""
    try:
        fn(*args)
    except Exception:
        log.exception("callback %r failed", fn)
