"""How much of this PC the node uses right now, for the status window's "what it costs".

Read from the node's own processes (the child and its children): their graphics
memory and the card's load through NVML where there is an NVIDIA card, otherwise
their memory and share of the processor through psutil. Never raises: a reading
that cannot be taken is None, and the sentence then says so plainly. No Qt here;
the GUI reads it off its thread (``app.ui.tasks``), since NVML and a process scan
can take a moment.
"""

from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import psutil

from app.texts import number, percent, text

log = logging.getLogger(__name__)

GB = 1_000_000_000


@dataclass(frozen=True)
class MachineUse:
    """One reading; ``None`` where this PC cannot say."""

    gpu_used_bytes: int | None = None  # the node's graphics memory
    gpu_total_bytes: int | None = None  # that card's memory
    gpu_busy_percent: float | None = None  # the whole card's load
    cpu_percent: float | None = None  # share of the whole processor (every core)
    ram_used_bytes: int | None = None

    @property
    def on_graphics_card(self) -> bool:
        return bool(self.gpu_used_bytes and self.gpu_total_bytes)


def gigabytes(size: int) -> str:
    """6_200_000_000 -> "6.2" (the locale's decimal mark; whole numbers from 10 GB)."""
    value = size / GB
    return number(value, 0 if value >= 10 else 1)


def use_sentence(use: MachineUse | None, active: bool) -> str:
    """ "Using 6.2 of 12 GB graphics memory; the card is 40 % busy." or the CPU's."""
    if not active:
        return text("use.none")
    if use is None:
        return text("use.unknown")
    if use.on_graphics_card:
        assert use.gpu_used_bytes is not None and use.gpu_total_bytes is not None
        used = gigabytes(use.gpu_used_bytes)
        total = text("size.gb", size=gigabytes(use.gpu_total_bytes))
        if use.gpu_busy_percent is None:
            return text("use.gpu", used=used, total=total)
        busy = percent(use.gpu_busy_percent)
        return text("use.gpu.busy", used=used, total=total, busy=busy)
    if use.ram_used_bytes is None:
        return text("use.unknown")
    ram = text("size.gb", size=gigabytes(use.ram_used_bytes))
    if use.cpu_percent is None:
        return text("use.cpu.memory", ram=ram)
    return text("use.cpu", ram=ram, cpu=percent(use.cpu_percent))


def _import_pynvml() -> ModuleType:
    return importlib.import_module("pynvml")


class MachineUseReader:
    """Reads the node's use of this PC; keeps NVML and the process handles between reads
    (a process's CPU share is measured since the previous read)."""

    def __init__(self, importer: Any = _import_pynvml) -> None:
        self._importer = importer
        self._nvml: Any = None
        self._nvml_failed = False
        self._processes: dict[int, psutil.Process] = {}

    def read(self, node_pid: int | None) -> MachineUse | None:
        if node_pid is None:
            return None
        try:
            pids = self._node_pids(node_pid)
        except psutil.Error:
            return None
        gpu = self._gpu(pids)
        cpu, ram = self._cpu_and_ram(pids)
        return MachineUse(*gpu, cpu_percent=cpu, ram_used_bytes=ram)

    def _node_pids(self, node_pid: int) -> set[int]:
        root = psutil.Process(node_pid)
        return {node_pid, *(child.pid for child in root.children(recursive=True))}

    def _cpu_and_ram(self, pids: set[int]) -> tuple[float | None, int | None]:
        cpu, ram = 0.0, 0
        for pid in list(self._processes):
            if pid not in pids:
                del self._processes[pid]
        try:
            for pid in pids:
                process = self._processes.get(pid)
                if process is None:  # the first read of a process only starts its count
                    process = self._processes[pid] = psutil.Process(pid)
                cpu += process.cpu_percent(interval=None)
                ram += process.memory_info().rss
        except psutil.Error as exc:
            log.debug("machine use: a node process went away (%s)", exc)
        cores = psutil.cpu_count() or 1
        return min(100.0, cpu / cores), ram or None

    def _start_nvml(self) -> bool:
        if self._nvml is not None:
            return True
        if self._nvml_failed:
            return False
        try:
            nvml = self._importer()
            nvml.nvmlInit()
        except Exception as exc:  # no library, no driver, no NVIDIA card
            log.info("machine use: NVML unavailable (%s); saying the processor's use", exc)
            self._nvml_failed = True
            return False
        self._nvml = nvml
        return True

    def _gpu(self, pids: set[int]) -> tuple[int | None, int | None, float | None]:
        """(the node's graphics memory, that card's memory, the card's load) on the card
        the node uses most; Nones where it uses none or NVML cannot tell."""
        if not self._start_nvml():
            return None, None, None
        nvml = self._nvml
        best: tuple[int, Any] | None = None
        try:
            for index in range(nvml.nvmlDeviceGetCount()):
                handle = nvml.nvmlDeviceGetHandleByIndex(index)
                used = sum(
                    int(process.usedGpuMemory or 0)
                    for process in nvml.nvmlDeviceGetComputeRunningProcesses(handle)
                    if process.pid in pids
                )
                if used and (best is None or used > best[0]):
                    best = (used, handle)
            if best is None:
                return None, None, None
            used, handle = best
            total = int(nvml.nvmlDeviceGetMemoryInfo(handle).total)
            try:
                busy: float | None = float(nvml.nvmlDeviceGetUtilizationRates(handle).gpu)
            except Exception:  # some cards report memory but not load
                busy = None
            return used, total, busy
        except Exception as exc:
            log.debug("machine use: NVML read failed (%s)", exc)
            return None, None, None
