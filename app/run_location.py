"""Refuse to start from somewhere the node cannot work, with a sentence that says what to do.

Two places must hold before the app starts a node:
- the data folder (``%LOCALAPPDATA%\\MeshNet``, or ``MESHNET_HOME``) must take
  a new file: the node writes its models, reports and key there, and one
  that cannot would fail later, half-way through a download;
- a frozen app's ``meshnet-node`` must lie beside it. Windows' Explorer runs a
  program inside a .zip by copying that one file to a temporary folder, so the
  app starts and its node is missing.

Pure (no Qt): ``app/ui/main.py`` shows the sentence in a message box.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.node_command import is_frozen, node_executable
from core.paths import platform_data_home

log = logging.getLogger(__name__)

REASON_DATA_NOT_WRITABLE = "data-folder-not-writable"
REASON_NODE_MISSING = "node-program-missing"


@dataclass(frozen=True)
class LocationProblem:
    reason: str
    sentence: str


def can_write(folder: Path) -> bool:
    """Whether a new file can be made in ``folder`` (made first if it is missing)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=".meshnet-write-check.", dir=folder)
    except OSError as exc:
        log.warning("cannot write in %s (%s)", folder, exc)
        return False
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(name)
    return True


def run_location_problem(
    *,
    data_dir: Path | None = None,
    frozen: bool | None = None,
    node_program: Path | None = None,
    writable: Callable[[Path], bool] = can_write,
) -> LocationProblem | None:
    """The first reason this app cannot run from where it is, or None."""
    folder = Path(platform_data_home()) if data_dir is None else data_dir
    if not writable(folder):
        return LocationProblem(
            REASON_DATA_NOT_WRITABLE,
            f"MeshNet cannot save files in {folder}, where this computer's part of the "
            "network is kept. Make sure that folder is yours and not read-only (or set "
            "MESHNET_HOME to a folder you can write to), then start MeshNet again.",
        )
    if is_frozen() if frozen is None else frozen:
        program = node_executable() if node_program is None else node_program
        if not program.is_file():
            return LocationProblem(
                REASON_NODE_MISSING,
                f"MeshNet's helper program is missing from {program.parent}. If you opened "
                "MeshNet from inside a .zip file, extract the whole folder first (or run "
                "the installer), then start MeshNet from there.",
            )
    return None
