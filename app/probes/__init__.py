"""The real probes behind the pause rules: GPU, programs, battery, idle time, full screen.

GPU: NVML, and on Windows its performance counters for any card (gpu_pdh.py).
Battery: psutil, and on Windows GetSystemPowerStatus; full screen: Windows'
SHQueryUserNotificationState (windows_shell.py). Programs: psutil's process
list, which is the Windows process list there too.

`SystemProbes.read` gathers one `ProbeReadings`; it can block for a moment (an NVML
call, a scan of every process), so the GUI calls it off its own thread. A probe that
fails answers None (or no programs), which never pauses the node.
"""

from __future__ import annotations

import logging
import sys
from typing import Protocol

from app.probe_readings import ProbeReadings
from app.probes.battery import BatteryProbe
from app.probes.gpu import NvmlGpuProbe
from app.probes.gpu_pdh import GpuProbe, GpuSource, PdhGpuProbe
from app.probes.idle import IdleReader, idle_reader
from app.probes.programs import ProgramsProbe
from app.probes.windows_shell import FullScreenProbe, WindowsBattery

log = logging.getLogger(__name__)

__all__ = ["BatteryProbe", "NvmlGpuProbe", "ProgramsProbe", "SystemProbes", "idle_reader"]


class OnOff(Protocol):
    def read(self) -> bool | None: ...


class Unknown:
    def read(self) -> bool | None:
        return None


class SystemProbes:
    def __init__(
        self,
        *,
        gpu: GpuSource,
        programs: ProgramsProbe,
        battery: OnOff,
        idle: IdleReader,
        full_screen: OnOff | None = None,
    ) -> None:
        self.gpu = gpu
        self.programs = programs
        self.battery = battery
        self.idle = idle
        self.full_screen = full_screen or Unknown()

    @classmethod
    def for_platform(cls, platform: str | None = None) -> SystemProbes:
        if (platform or sys.platform) == "win32":
            return cls(
                gpu=GpuProbe(NvmlGpuProbe(), PdhGpuProbe()),
                programs=ProgramsProbe(),
                battery=WindowsBattery(),
                idle=idle_reader("win32"),
                full_screen=FullScreenProbe(),
            )
        return cls(
            gpu=NvmlGpuProbe(),
            programs=ProgramsProbe(),
            battery=BatteryProbe(),
            idle=idle_reader(platform),
        )

    def close(self) -> None:
        """Release NVML and the X display (the app is quitting); reads after this start again."""
        self.gpu.close()
        close = getattr(self.idle, "close", None)
        if close is not None:
            close()

    def read(self, node_pid: int | None) -> ProbeReadings:
        gpu = self.gpu.read(() if node_pid is None else (node_pid,))
        return ProbeReadings(
            gpu_busy_by_others=gpu.busy_by_others,
            gpu_temperature_c=gpu.temperature_c,
            running_programs=self.programs.read(),
            on_battery=self.battery.read(),
            idle_seconds=self.idle.read(),
            full_screen=self.full_screen.read(),
        )
