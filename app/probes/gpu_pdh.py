"""Graphics-card load and memory from Windows' performance counters: any card, any vendor.

NVML reads NVIDIA cards only. Windows (10 1709 and later) counts every
card's engines per process in ``\\GPU Engine(*)\\Utilization Percentage``,
whose instance names carry the process id
(``pid_1234_luid_0x0_0xC6F1_phys_0_eng_0_engtype_3D``), and each card's
memory in ``\\GPU Adapter Memory(*)\\Dedicated Usage``. So AMD and Intel cards
get the "pause while the graphics card is busy" rule too, with the node's own
work told apart from a game's as NVML does. Task Manager's figure is the one
used: per process and engine type, the sum over that type's engines; a
process is busy by its busiest engine type. No temperature: Windows has no
counter for it.
"""

from __future__ import annotations

import logging
import os
import re
from collections import defaultdict
from collections.abc import Collection
from typing import Protocol

from app.probes.gpu_reading import BUSY_THRESHOLD_PERCENT, UNKNOWN, GpuReading
from app.probes.pdh import CounterReader, PdhCounters

log = logging.getLogger(__name__)

ENGINE_UTILISATION = r"\GPU Engine(*)\Utilization Percentage"
DEDICATED_USAGE = r"\GPU Adapter Memory(*)\Dedicated Usage"
_ENGINE = re.compile(r"^pid_(\d+)_.*_engtype_(.+)$")


def busiest_by_process(values: dict[str, float]) -> dict[int, float]:
    """{pid: utilisation of its busiest engine type, summed over that type's engines}."""
    per_type: dict[tuple[int, str], float] = defaultdict(float)
    for instance, value in values.items():
        match = _ENGINE.match(instance)
        if match:
            per_type[(int(match.group(1)), match.group(2))] += value
    busiest: dict[int, float] = {}
    for (pid, _engine), value in per_type.items():
        busiest[pid] = max(busiest.get(pid, 0.0), value)
    return busiest


class PdhGpuProbe:
    """Busy if another process uses any engine of any card past the threshold."""

    def __init__(
        self,
        counters: CounterReader | None = None,
        *,
        busy_threshold_percent: float = BUSY_THRESHOLD_PERCENT,
        own_pid: int | None = None,
    ) -> None:
        self._counters = counters if counters is not None else PdhCounters()
        self.busy_threshold_percent = busy_threshold_percent
        self._own_pid = os.getpid() if own_pid is None else own_pid

    def available(self) -> bool:
        return bool(self._counters.read(DEDICATED_USAGE))

    def read(self, exclude_pids: Collection[int] = ()) -> GpuReading:
        engines = self._counters.read(ENGINE_UTILISATION)
        if not engines:
            return UNKNOWN
        excluded = {self._own_pid, *exclude_pids}
        others = {p: v for p, v in busiest_by_process(engines).items() if p not in excluded}
        busy = any(value >= self.busy_threshold_percent for value in others.values())
        return GpuReading(busy_by_others=busy, temperature_c=None)

    def dedicated_memory_used(self) -> dict[str, int]:
        """{adapter instance: bytes of its own memory in use}; {} when unreadable."""
        return {name: int(v) for name, v in self._counters.read(DEDICATED_USAGE).items()}

    def close(self) -> None:
        self._counters.close()


class GpuSource(Protocol):
    def available(self) -> bool: ...

    def read(self, exclude_pids: Collection[int] = ()) -> GpuReading: ...

    def close(self) -> None: ...


class GpuProbe:
    """NVML where it reads a card (temperature too), Windows' counters otherwise."""

    def __init__(self, nvml: GpuSource, pdh: GpuSource | None) -> None:
        self._nvml = nvml
        self._pdh = pdh

    def available(self) -> bool:
        return self._nvml.available() or (self._pdh is not None and self._pdh.available())

    def read(self, exclude_pids: Collection[int] = ()) -> GpuReading:
        if self._nvml.available():
            return self._nvml.read(exclude_pids)
        return UNKNOWN if self._pdh is None else self._pdh.read(exclude_pids)

    def close(self) -> None:
        self._nvml.close()
        if self._pdh is not None:
            self._pdh.close()
