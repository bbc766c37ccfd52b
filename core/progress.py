"""One progress shape for every long step, and the token that cancels them.

Importing the default model, fetching a shard from the hub, loading layers and
the doctor's test forward all report ``Progress(stage, done, total, message)``
through one callback type, so the CLI prints one JSON shape and the GUI draws
one progress bar for all of them:

    stage    "import" | "fetch" | "load" | "probe"
    done     units finished so far (tensors, files, layers, forward steps)
    total    units in the whole step (0 when not known yet)
    message  a sentence for people ("Loading layers 0–15…")
    item     what the step works on now, when it is one named thing (a file it
             fetches); empty otherwise, so a GUI need not parse the sentence

A :class:`CancelToken` is checked at every progress point: a node asked to
stop in the middle of loading stops at the next layer instead of finishing a
load nobody wants. The check raises :class:`Cancelled`, which every step lets
pass (it is not a failure of the step, so it is never turned into a verdict).

Nothing here imports torch: the GUI process may use these shapes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from core.errors import Cancelled

STAGE_IMPORT = "import"
STAGE_FETCH = "fetch"
STAGE_LOAD = "load"
STAGE_PROBE = "probe"
STAGES = (STAGE_IMPORT, STAGE_FETCH, STAGE_LOAD, STAGE_PROBE)


@dataclass(frozen=True)
class Progress:
    stage: str
    done: int
    total: int
    message: str
    item: str = ""

    def data(self) -> dict[str, int | str]:
        """The event payload the child protocol carries (the message travels beside it)."""
        payload: dict[str, int | str] = {
            "stage": self.stage,
            "done": self.done,
            "total": self.total,
        }
        if self.item:
            payload["item"] = self.item
        return payload


ProgressCallback = Callable[[Progress], None]


def no_progress(_progress: Progress) -> None:
    """The default callback: nobody is watching."""


class CancelToken:
    """A thread-safe flag a long step polls; set once, stays set until :meth:`reset`."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.why = ""  # why it was cancelled, when the canceller knows (said in the stop)

    def cancel(self, why: str = "") -> None:
        if why and not self._event.is_set():
            self.why = why
        self._event.set()

    def reset(self) -> None:
        self._event.clear()
        self.why = ""

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self, where: str = "") -> None:
        if self._event.is_set():
            said = f"stopped while {where}" if where else "stopped"
            raise Cancelled(f"{said}: {self.why}" if self.why else said)

    def wait(self, timeout: float | None = None) -> bool:
        return self._event.wait(timeout)


def reporter(
    callback: ProgressCallback | None, cancel: CancelToken | None = None
) -> ProgressCallback:
    """A callback that checks ``cancel`` first, then forwards to ``callback``."""
    forward = callback or no_progress

    def report(progress: Progress) -> None:
        if cancel is not None:
            cancel.check(progress.message.rstrip("…").lower() or progress.stage)
        forward(progress)

    return report
