"""What the pause rules read of the machine, apart from both the rules and the probes.

``app.pause_rules`` decides from a ``ProbeReadings``; ``app.probes`` produces
one. Both import this module and neither imports the other's types, so the
two stay out of an import circle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class ProbeReadings:
    gpu_busy_by_others: bool | None = None
    gpu_temperature_c: float | None = None
    running_programs: frozenset[str] = frozenset()  # process names, as the OS reports them
    on_battery: bool | None = None
    idle_seconds: float | None = None
    # Windows: a full-screen game, app or presentation runs (SHQueryUserNotificationState)
    full_screen: bool | None = None


class Probes(Protocol):
    def read(self, node_pid: int | None) -> ProbeReadings:
        """Read the machine now; may block for a moment (NVML, a process scan)."""
        ...
