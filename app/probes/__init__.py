"""The real probes behind the pause rules: GPU (NVML), programs and battery (psutil), idle time.

`SystemProbes.read` gathers one `ProbeReadings`; it can block for a moment (an NVML
call, a scan of every process), so the GUI calls it off its own thread. A probe that
fails answers None (or no programs), which never pauses the node.
"""

from __future__ import annotations

import logging

from app.probe_readings import ProbeReadings
from app.probes.battery import BatteryProbe
from app.probes.gpu import NvmlGpuProbe
from app.probes.idle import IdleReader, idle_reader
from app.probes.programs import ProgramsProbe

log = logging.getLogger(__name__)

__all__ = ["BatteryProbe", "NvmlGpuProbe", "ProgramsProbe", "SystemProbes", "idle_reader"]


class SystemProbes:
    def __init__(
        self,
        *,
        gpu: NvmlGpuProbe,
        programs: ProgramsProbe,
        battery: BatteryProbe,
        idle: IdleReader,
    ) -> None:
        self.gpu = gpu
        self.programs = programs
        self.battery = battery
        self.idle = idle

    @classmethod
    def for_platform(cls, platform: str | None = None) -> SystemProbes:
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
        )
