"""GPU readings through NVML (`nvidia-ml-py`, imported as `pynvml`).

Two answers for the pause rules: is another process keeping the GPU busy (so a
contributor need not list every game), and how hot is the GPU. Both are None where
there is no NVIDIA GPU, no driver or no `pynvml`: the probe never raises, since an
exception here would stop every other pause rule from being read.

Per-process utilisation (`nvmlDeviceGetProcessUtilization`) is what lets the node's
own work be told apart from a game's; where the driver does not support it, the
whole-GPU utilisation is used, but only while the node itself is not on the GPU.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections import defaultdict
from collections.abc import Callable, Collection
from types import ModuleType
from typing import Any

from app.probes.gpu_pdh import PdhGpuProbe
from app.probes.gpu_reading import BUSY_THRESHOLD_PERCENT, UNKNOWN, GpuReading

log = logging.getLogger(__name__)

__all__ = ["BUSY_THRESHOLD_PERCENT", "UNKNOWN", "GpuReading", "NvmlGpuProbe"]


def _import_pynvml() -> ModuleType:
    return importlib.import_module("pynvml")


class NvmlGpuProbe:
    """Reads every NVIDIA GPU: busy if any is busy with others, the hottest one's temperature.

    NVML is initialised on the first read and kept; if it cannot start (no library,
    no driver, no GPU) the probe answers unknown from then on without retrying.
    """

    def __init__(
        self,
        *,
        importer: Callable[[], ModuleType] = _import_pynvml,
        busy_threshold_percent: float = BUSY_THRESHOLD_PERCENT,
        own_pid: int | None = None,
    ) -> None:
        self._importer = importer
        self.busy_threshold_percent = busy_threshold_percent
        self._own_pid = os.getpid() if own_pid is None else own_pid
        self._nvml: Any = None
        self._handles: list[Any] = []
        self._failed = False
        self._last_seen: dict[int, int] = {}  # device index -> last sample timestamp (µs)

    def _start(self) -> bool:
        if self._nvml is not None:
            return True
        if self._failed:
            return False
        try:
            nvml = self._importer()
            nvml.nvmlInit()
            self._handles = [
                nvml.nvmlDeviceGetHandleByIndex(i) for i in range(nvml.nvmlDeviceGetCount())
            ]
        except Exception as exc:  # ImportError, NVMLError, a missing libnvidia-ml
            log.info("gpu probe: NVML unavailable (%s); GPU pause rules stay off", exc)
            self._failed = True
            return False
        if not self._handles:
            log.info("gpu probe: NVML found no GPU; GPU pause rules stay off")
            self._failed = True
            return False
        self._nvml = nvml
        return True

    def available(self) -> bool:
        """Whether a graphics card can be read here at all (NVML and an NVIDIA GPU)."""
        return self._start()

    def read(self, exclude_pids: Collection[int] = ()) -> GpuReading:
        """Never raises; unknown parts are None."""
        if not self._start():
            return UNKNOWN
        excluded = {self._own_pid, *exclude_pids}
        busy: list[bool | None] = []
        temps: list[float] = []
        for index, handle in enumerate(self._handles):
            busy.append(self._busy(index, handle, excluded))
            temp = self._temperature(handle)
            if temp is not None:
                temps.append(temp)
        if any(b is True for b in busy):
            busy_by_others: bool | None = True
        elif busy and all(b is False for b in busy):
            busy_by_others = False
        else:
            busy_by_others = None
        return GpuReading(busy_by_others, max(temps) if temps else None)

    def _temperature(self, handle: Any) -> float | None:
        nvml = self._nvml
        try:
            return float(nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU))
        except Exception as exc:
            log.debug("gpu probe: no temperature (%s)", exc)
            return None

    def _busy(self, index: int, handle: Any, excluded: set[int]) -> bool | None:
        nvml = self._nvml
        try:
            samples = nvml.nvmlDeviceGetProcessUtilization(handle, self._last_seen.get(index, 0))
        except Exception as exc:
            no_samples = isinstance(exc, getattr(nvml, "NVMLError_NotFound", ())) or (
                getattr(exc, "value", None) == getattr(nvml, "NVML_SUCCESS", 0)
            )
            if no_samples:
                # No process has used the GPU since the last read (pynvml raises
                # NVMLError(NVML_SUCCESS) when the driver reports zero samples).
                return False
            log.debug("gpu probe: no per-process utilisation (%s); using the whole GPU", exc)
            return self._busy_whole_gpu(handle, excluded)
        per_pid: dict[int, list[float]] = defaultdict(list)
        for sample in samples:
            self._last_seen[index] = max(self._last_seen.get(index, 0), int(sample.timeStamp))
            per_pid[int(sample.pid)].append(float(sample.smUtil))
        others = {
            pid: sum(values) / len(values) for pid, values in per_pid.items() if pid not in excluded
        }
        return any(util >= self.busy_threshold_percent for util in others.values())

    def _busy_whole_gpu(self, handle: Any, excluded: set[int]) -> bool | None:
        """Whole-GPU utilisation counts as others' only while no excluded pid is on the GPU."""
        nvml = self._nvml
        try:
            pids = {
                int(p.pid)
                for getter in (
                    nvml.nvmlDeviceGetComputeRunningProcesses,
                    nvml.nvmlDeviceGetGraphicsRunningProcesses,
                )
                for p in getter(handle)
            }
            if pids & excluded:
                return None
            utilisation = float(nvml.nvmlDeviceGetUtilizationRates(handle).gpu)
        except Exception as exc:
            log.debug("gpu probe: no utilisation (%s)", exc)
            return None
        return utilisation >= self.busy_threshold_percent

    def close(self) -> None:
        if self._nvml is not None:
            try:
                self._nvml.nvmlShutdown()
            except Exception as exc:
                log.debug("gpu probe: shutdown failed (%s)", exc)
            self._nvml = None
            self._handles = []


def gpu_rules_measurable(platform: str | None = None) -> bool:
    """True where the graphics-card pause rules can work (Settings says so when not):
    an NVIDIA card NVML reads, or on Windows any card its performance counters read."""
    if NvmlGpuProbe().available():
        return True
    if (platform or sys.platform) != "win32":
        return False
    return PdhGpuProbe().available()
