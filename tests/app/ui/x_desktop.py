"""A real X server (Xvfb) for the app's desktop tests, with or without a system tray.

``x_desktop(log_dir, tray=...)`` starts Xvfb on a free display (and trayer for a
tray) and yields the display name; the test is skipped, saying what to install,
where a tool is missing (.ci/install-desktop.sh installs them in CI).
:func:`close_like_a_window_manager` sends the ``WM_DELETE_WINDOW`` message a
window manager sends when the user clicks a window's close button;
:func:`press_key` types a key into a window, as a user at the keyboard does.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

CLIENT_MESSAGE = 33  # X11's ClientMessage event type


def free_display() -> int:
    for number in range(90, 200):
        if (
            not Path(f"/tmp/.X11-unix/X{number}").exists()
            and not Path(f"/tmp/.X{number}-lock").exists()
        ):
            return number
    raise RuntimeError("no free X display number between :90 and :199")


def skip_without(tools: tuple[str, ...]) -> None:
    """Skip where a tool is missing, saying what to install; under CI=true fail instead
    (.ci/run installs them: a desktop test skipped there would prove nothing)."""
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        why = (
            f"{', '.join(missing)} not installed; run .ci/install-desktop.sh "
            "(Debian: xvfb trayer xdotool libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1)"
        )
        if os.environ.get("CI", "").lower() not in ("", "0", "false", "no"):
            pytest.fail(f"CI must run the desktop tests: {why}")
        pytest.skip(why)


@contextlib.contextmanager
def x_desktop(log_dir: Path, *, tray: bool) -> Iterator[str]:
    skip_without(("Xvfb", "xdotool", "trayer") if tray else ("Xvfb", "xdotool"))
    display = f":{free_display()}"
    log = (log_dir / "desktop.log").open("wb")
    processes = [
        subprocess.Popen(
            ["Xvfb", display, "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
            stdout=log,
            stderr=log,
        )
    ]
    env = {**os.environ, "DISPLAY": display}
    try:
        deadline = time.monotonic() + 20
        while not Path(f"/tmp/.X11-unix/X{display[1:]}").exists():
            assert processes[0].poll() is None, "Xvfb exited"
            assert time.monotonic() < deadline, "Xvfb did not start"
            time.sleep(0.1)
        if tray:
            trayer = [
                "trayer",
                *("--edge", "top", "--align", "right", "--widthtype", "request"),
                *("--height", "24"),
            ]
            processes.append(subprocess.Popen(trayer, env=env, stdout=log, stderr=log))
            time.sleep(1.0)  # trayer claims the tray selection
        yield display
    finally:
        for process in reversed(processes):
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
        log.close()


def visible_windows(display: str, name_regex: str) -> list[int]:
    """Ids of the mapped windows whose title matches ``name_regex`` (xdotool search)."""
    result = subprocess.run(
        ["xdotool", "search", "--onlyvisible", "--name", name_regex],
        env={**os.environ, "DISPLAY": display},
        capture_output=True,
        text=True,
        timeout=10,
    )
    return [int(line) for line in result.stdout.split()]


def press_key(display: str, window: int, key: str) -> None:
    """Give ``window`` the keyboard focus and press ``key`` (an X keysym, e.g. Return).

    There is no window manager to focus windows, so xdotool sets the X input focus
    itself (and waits until the window has it); the key goes through XTEST, as a
    real keyboard's does, to whatever widget has Qt's focus in that window.
    """
    env = {**os.environ, "DISPLAY": display}
    focus = ["xdotool", "windowfocus", "--sync", str(window)]
    subprocess.run(focus, env=env, capture_output=True, timeout=10, check=False)
    subprocess.run(["xdotool", "key", key], env=env, capture_output=True, timeout=10, check=True)


class _ClientMessage(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("serial", ctypes.c_ulong),
        ("send_event", ctypes.c_int),
        ("display", ctypes.c_void_p),
        ("window", ctypes.c_ulong),
        ("message_type", ctypes.c_ulong),
        ("format", ctypes.c_int),
        ("data", ctypes.c_long * 5),
        ("pad", ctypes.c_long * 24),  # an XEvent is a union at least this large
    ]


def close_like_a_window_manager(display: str, window: int) -> None:
    """Send ``WM_PROTOCOLS``/``WM_DELETE_WINDOW`` to ``window``, as a window manager's
    close button does (xdotool's windowclose destroys the window instead)."""
    name = ctypes.util.find_library("X11")
    assert name, "libX11 not found"
    x11 = ctypes.CDLL(name)
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XInternAtom.restype = ctypes.c_ulong
    x11.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    x11.XSendEvent.argtypes = [
        ctypes.c_void_p,
        ctypes.c_ulong,
        ctypes.c_int,
        ctypes.c_long,
        ctypes.POINTER(_ClientMessage),
    ]
    x11.XFlush.argtypes = [ctypes.c_void_p]
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    connection = x11.XOpenDisplay(display.encode())
    assert connection, f"cannot open display {display}"
    try:
        event = _ClientMessage()
        event.type = CLIENT_MESSAGE
        event.display = connection
        event.window = window
        event.message_type = x11.XInternAtom(connection, b"WM_PROTOCOLS", 0)
        event.format = 32
        event.data[0] = x11.XInternAtom(connection, b"WM_DELETE_WINDOW", 0)
        event.data[1] = 0  # CurrentTime
        assert x11.XSendEvent(connection, window, 0, 0, ctypes.byref(event))
        x11.XFlush(connection)
    finally:
        x11.XCloseDisplay(connection)
