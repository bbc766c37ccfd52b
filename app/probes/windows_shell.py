"""Windows' own answers to "is the user gaming or presenting?" and "on battery?", via ctypes.

- ``SHQueryUserNotificationState`` (shell32) says what Windows itself uses to
  hold back notifications: a full-screen Direct3D game
  (``QUNS_RUNNING_D3D_FULL_SCREEN``), a full-screen app or a video
  (``QUNS_BUSY``), or presentation mode (``QUNS_PRESENTATION_MODE``). Any of
  those pauses the node under "pause while the graphics card is busy": the
  user is playing or showing something, and the list of programs need not
  name the game.
- ``GetSystemPowerStatus`` (kernel32): on battery when the AC line is off; a
  PC with no system battery is a desktop, never on battery.

Each reader answers None when it cannot tell (not Windows, a call refused),
which never pauses. The DLLs are injected so each branch runs in tests on any OS.
"""

from __future__ import annotations

import ctypes
import logging
from typing import Any

log = logging.getLogger(__name__)

QUNS_NOT_PRESENT = 1
QUNS_BUSY = 2
QUNS_RUNNING_D3D_FULL_SCREEN = 3
QUNS_PRESENTATION_MODE = 4
QUNS_ACCEPTS_NOTIFICATIONS = 5
QUNS_QUIET_TIME = 6
QUNS_APP = 7
FULL_SCREEN_STATES = frozenset({QUNS_BUSY, QUNS_RUNNING_D3D_FULL_SCREEN, QUNS_PRESENTATION_MODE})

AC_OFFLINE, AC_ONLINE, AC_UNKNOWN = 0, 1, 255
BATTERY_FLAG_NO_SYSTEM_BATTERY = 128
BATTERY_FLAG_UNKNOWN = 255


def _windll() -> Any:
    return ctypes.windll  # type: ignore[attr-defined]


class FullScreenProbe:
    """True while a full-screen game, app or presentation runs; None when unknown."""

    def __init__(self, windll: Any = None) -> None:
        self._windll = windll

    def read(self) -> bool | None:
        try:
            windll = self._windll if self._windll is not None else _windll()
            state = ctypes.c_int(0)
            result = windll.shell32.SHQueryUserNotificationState(ctypes.byref(state))
        except Exception as exc:  # AttributeError off Windows, OSError from the call
            log.debug("full-screen probe: unavailable (%s)", exc)
            return None
        if result != 0:  # an HRESULT other than S_OK
            return None
        return state.value in FULL_SCREEN_STATES


class SYSTEM_POWER_STATUS(ctypes.Structure):
    _fields_ = [
        ("ACLineStatus", ctypes.c_ubyte),
        ("BatteryFlag", ctypes.c_ubyte),
        ("BatteryLifePercent", ctypes.c_ubyte),
        ("SystemStatusFlag", ctypes.c_ubyte),
        ("BatteryLifeTime", ctypes.c_uint32),
        ("BatteryFullLifeTime", ctypes.c_uint32),
    ]


def on_battery(status: SYSTEM_POWER_STATUS) -> bool | None:
    if (
        status.BatteryFlag != BATTERY_FLAG_UNKNOWN
        and status.BatteryFlag & BATTERY_FLAG_NO_SYSTEM_BATTERY
    ):
        return False
    if status.ACLineStatus == AC_OFFLINE:
        return True
    if status.ACLineStatus == AC_ONLINE:
        return False
    return None


class WindowsBattery:
    def __init__(self, windll: Any = None) -> None:
        self._windll = windll

    def read(self) -> bool | None:
        try:
            windll = self._windll if self._windll is not None else _windll()
            status = SYSTEM_POWER_STATUS()
            if not windll.kernel32.GetSystemPowerStatus(ctypes.byref(status)):
                return None
        except Exception as exc:
            log.debug("battery probe: GetSystemPowerStatus unavailable (%s)", exc)
            return None
        return on_battery(status)
