"""The environment under which tracker processes a test starts audit every step.

A network a test builds is minutes old: no node is established yet, so every
independent node may judge (issue 35's thresholds are for a network that has run
a while)."""

from __future__ import annotations

import os
from collections.abc import Callable

EVERY_STEP = {
    "MESHNET_TRACKER_AUDIT_RATE": "1",
    "MESHNET_TRACKER_AUDIT_PROBATION_RATE": "1",
    "MESHNET_TRACKER_AUDITOR_MIN_AUDITS": "0",
    "MESHNET_TRACKER_AUDITOR_MIN_AGE_S": "0",
}


def audit_every_step() -> Callable[[], None]:
    """Set the audit settings for processes started from now on; returns the undo."""
    saved = {name: os.environ.get(name) for name in EVERY_STEP}
    os.environ.update(EVERY_STEP)

    def restore() -> None:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    return restore
