"""Which programs are running, by process name (psutil), for the "pause while X runs" rule.

Names are returned lower-cased as the OS reports them ("eldenring.exe" on Windows,
"steam" on Linux); `app.pause_rules.program_key` compares them with or without
".exe". Processes that vanish or deny access mid-scan are skipped, and a failed
scan reads as no programs rather than raising.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

log = logging.getLogger(__name__)


def _process_iter() -> Iterable[Any]:
    import psutil

    return psutil.process_iter(["name"])


class ProgramsProbe:
    def __init__(self, process_iter: Callable[[], Iterable[Any]] = _process_iter) -> None:
        self._process_iter = process_iter

    def read(self) -> frozenset[str]:
        names: set[str] = set()
        try:
            for process in self._process_iter():
                try:
                    name = process.info.get("name")
                except Exception:  # psutil.NoSuchProcess / AccessDenied on some platforms
                    continue
                if isinstance(name, str) and name:
                    names.add(name.lower())
        except Exception as exc:
            log.warning("programs probe: could not list processes (%s)", exc)
        return frozenset(names)
