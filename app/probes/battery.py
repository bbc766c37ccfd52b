"""Whether the PC runs on battery (psutil.sensors_battery), for the "pause on battery" rule.

A machine without a battery is a desktop: never on battery (False). Where the
platform has no battery sensor, or the plug state is unknown, the answer is None,
which never pauses.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)


def _sensors_battery() -> Any:
    import psutil

    sensors = getattr(psutil, "sensors_battery", None)
    if sensors is None:  # not every platform psutil supports has a battery sensor
        raise NotImplementedError("psutil has no battery sensor on this platform")
    return sensors()


class BatteryProbe:
    def __init__(self, sensors_battery: Callable[[], Any] = _sensors_battery) -> None:
        self._sensors_battery = sensors_battery

    def read(self) -> bool | None:
        try:
            battery = self._sensors_battery()
        except Exception as exc:
            log.debug("battery probe: unavailable (%s)", exc)
            return None
        if battery is None:
            return False
        plugged = getattr(battery, "power_plugged", None)
        return None if plugged is None else not plugged
