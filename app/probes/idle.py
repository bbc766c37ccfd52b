"""How long since the user last touched the keyboard or mouse, as each OS tells it.

- Windows: ``GetLastInputInfo`` (user32) against ``GetTickCount`` (kernel32), via ctypes.
- macOS: ``HIDIdleTime`` (nanoseconds) from ``ioreg -c IOHIDSystem``.
- Linux with an X display: the XScreenSaver extension (``libXss``) via ctypes.
- Linux otherwise: logind's ``IdleHint``/``IdleSinceHint`` for the session, read with
  ``loginctl show-session`` or, failing that, ``busctl``.

Every reader answers None when it cannot tell (no library, no session, a tool
missing); the idle rule then never pauses. The OS handles (`windll`, the library
loader, the command runner, the environment and the clock) are injected so that
each branch runs in tests on any OS.
"""

from __future__ import annotations

import ctypes
import logging
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

log = logging.getLogger(__name__)

Run = Callable[[list[str]], str]


class IdleReader(Protocol):
    def read(self) -> float | None: ...


def run_command(argv: list[str]) -> str:
    """stdout of a short command; raises OSError/CalledProcessError/TimeoutExpired."""
    return subprocess.run(argv, capture_output=True, text=True, check=True, timeout=5).stdout


class LASTINPUTINFO(ctypes.Structure):
    _fields_ = [("cbSize", ctypes.c_uint), ("dwTime", ctypes.c_uint32)]


class WindowsIdle:
    """Milliseconds since the last input event, from the 32-bit tick count (wraps in 49 days)."""

    def __init__(self, windll: Any = None) -> None:
        self._windll = windll

    def read(self) -> float | None:
        try:
            windll = self._windll if self._windll is not None else ctypes.windll  # type: ignore[attr-defined]
            info = LASTINPUTINFO()
            info.cbSize = ctypes.sizeof(LASTINPUTINFO)
            if not windll.user32.GetLastInputInfo(ctypes.pointer(info)):
                return None
            now_ms = int(windll.kernel32.GetTickCount()) & 0xFFFFFFFF
        except Exception as exc:
            log.debug("idle probe: GetLastInputInfo failed (%s)", exc)
            return None
        return ((now_ms - info.dwTime) & 0xFFFFFFFF) / 1000.0


_HID_IDLE = re.compile(r'"HIDIdleTime"\s*=\s*(\d+)')


class MacIdle:
    def __init__(self, run: Run = run_command) -> None:
        self._run = run

    def read(self) -> float | None:
        try:
            output = self._run(["ioreg", "-c", "IOHIDSystem"])
        except Exception as exc:
            log.debug("idle probe: ioreg failed (%s)", exc)
            return None
        match = _HID_IDLE.search(output)
        return int(match.group(1)) / 1e9 if match else None


class XScreenSaverInfo(ctypes.Structure):
    _fields_ = [
        ("window", ctypes.c_ulong),
        ("state", ctypes.c_int),
        ("kind", ctypes.c_int),
        ("til_or_since", ctypes.c_ulong),
        ("idle", ctypes.c_ulong),  # milliseconds
        ("eventMask", ctypes.c_ulong),
    ]


def _load_library(name: str) -> Any:
    return ctypes.CDLL(name)


class X11Idle:
    """The X server's idle time through the XScreenSaver extension; keeps the display open."""

    def __init__(self, display: str, load_library: Callable[[str], Any] = _load_library) -> None:
        self._display_name = display
        self._load_library = load_library
        self._x11: Any = None
        self._xss: Any = None
        self._display: Any = None
        self._info: Any = None
        self._failed = False

    def _open(self) -> bool:
        if self._display is not None:
            return True
        if self._failed:
            return False
        try:
            x11 = self._load_library("libX11.so.6")
            xss = self._load_library("libXss.so.1")
            x11.XOpenDisplay.restype = ctypes.c_void_p
            x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
            x11.XDefaultRootWindow.restype = ctypes.c_ulong
            x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
            x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
            xss.XScreenSaverAllocInfo.restype = ctypes.POINTER(XScreenSaverInfo)
            xss.XScreenSaverQueryExtension.argtypes = [
                ctypes.c_void_p,
                ctypes.POINTER(ctypes.c_int),
                ctypes.POINTER(ctypes.c_int),
            ]
            xss.XScreenSaverQueryInfo.argtypes = [
                ctypes.c_void_p,
                ctypes.c_ulong,
                ctypes.POINTER(XScreenSaverInfo),
            ]
            display = x11.XOpenDisplay(self._display_name.encode())
            if not display:
                raise OSError(f"cannot open X display {self._display_name!r}")
            event_base, error_base = ctypes.c_int(), ctypes.c_int()
            if not xss.XScreenSaverQueryExtension(
                display, ctypes.byref(event_base), ctypes.byref(error_base)
            ):
                x11.XCloseDisplay(display)
                raise OSError("the X server has no XScreenSaver extension")
        except Exception as exc:
            log.info("idle probe: X11 idle time unavailable (%s)", exc)
            self._failed = True
            return False
        self._x11, self._xss, self._display = x11, xss, display
        self._info = xss.XScreenSaverAllocInfo()
        return True

    def close(self) -> None:
        if self._display is not None:
            self._x11.XFree(self._info)
            self._x11.XCloseDisplay(self._display)
            self._display = self._info = None

    def read(self) -> float | None:
        if not self._open():
            return None
        try:
            root = self._x11.XDefaultRootWindow(self._display)
            if not self._xss.XScreenSaverQueryInfo(self._display, root, self._info):
                return None
            return float(self._info.contents.idle) / 1000.0
        except Exception as exc:
            log.debug("idle probe: XScreenSaverQueryInfo failed (%s)", exc)
            return None


def _property(output: str, name: str) -> str | None:
    for line in output.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == name:
            return value.strip()
    return None


class LogindIdle:
    """logind's idle hint for this session: 0 while active, else time since it went idle.

    logind only knows what the desktop tells it (GNOME and KDE set the hint after
    their own idle delay), so a session whose hint was never set (IdleSinceHint 0)
    reads as unknown rather than as "always active".
    """

    def __init__(
        self,
        session: str = "auto",
        run: Run = run_command,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._session = session
        self._run = run
        self._clock = clock

    def _hints(self) -> tuple[str, int] | None:
        try:
            output = self._run(
                ["loginctl", "show-session", self._session, "-p", "IdleHint", "-p", "IdleSinceHint"]
            )
            hint, since = _property(output, "IdleHint"), _property(output, "IdleSinceHint")
            if hint is not None and since is not None:
                return hint, int(since)
        except Exception as exc:
            log.debug("idle probe: loginctl failed (%s); trying busctl", exc)
        path = f"/org/freedesktop/login1/session/{self._session}"
        values: list[str] = []
        try:
            for prop in ("IdleHint", "IdleSinceHint"):
                output = self._run(
                    [
                        "busctl",
                        "get-property",
                        "org.freedesktop.login1",
                        path,
                        "org.freedesktop.login1.Session",
                        prop,
                    ]
                )
                values.append(output.split()[1])  # "b true" / "t 1733050000000000"
            return ("yes" if values[0] == "true" else "no"), int(values[1])
        except Exception as exc:
            log.debug("idle probe: busctl failed (%s)", exc)
            return None

    def read(self) -> float | None:
        hints = self._hints()
        if hints is None:
            return None
        hint, since_us = hints
        if since_us <= 0:
            return None
        if hint != "yes":
            return 0.0
        return max(0.0, self._clock() - since_us / 1e6)


class UnknownIdle:
    def read(self) -> float | None:
        return None


def idle_reader(
    platform: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    windll: Any = None,
    run: Run = run_command,
    load_library: Callable[[str], Any] = _load_library,
    clock: Callable[[], float] = time.time,
) -> IdleReader:
    """The idle reader for `platform` (a `sys.platform` value; default this OS)."""
    platform = platform or sys.platform
    env = os.environ if environ is None else environ
    if platform == "win32":
        return WindowsIdle(windll)
    if platform == "darwin":
        return MacIdle(run)
    if platform.startswith("linux") or platform.startswith("freebsd"):
        if env.get("DISPLAY"):
            return _FirstKnown(X11Idle(env["DISPLAY"], load_library), _logind(env, run, clock))
        return _logind(env, run, clock)
    return UnknownIdle()


def _logind(env: Mapping[str, str], run: Run, clock: Callable[[], float]) -> LogindIdle:
    return LogindIdle(env.get("XDG_SESSION_ID") or "auto", run, clock)


class _FirstKnown:
    """X11 first (it sees every key press); logind when X11 cannot answer."""

    def __init__(self, *readers: IdleReader) -> None:
        self._readers = readers

    def close(self) -> None:
        for reader in self._readers:
            close = getattr(reader, "close", None)
            if close is not None:
                close()

    def read(self) -> float | None:
        for reader in self._readers:
            value = reader.read()
            if value is not None:
                return value
        return None
