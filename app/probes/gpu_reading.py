"""What a graphics-card probe answers, whichever source read it (NVML or Windows' counters)."""

from __future__ import annotations

from dataclasses import dataclass

BUSY_THRESHOLD_PERCENT = 15.0


@dataclass(frozen=True)
class GpuReading:
    busy_by_others: bool | None
    temperature_c: float | None


UNKNOWN = GpuReading(busy_by_others=None, temperature_c=None)
