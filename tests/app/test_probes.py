"""The machine probes behind the pause rules, each OS branch run here with injected OS APIs."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from app.pause_rules import ProbeReadings
from app.probes import SystemProbes
from app.probes.battery import BatteryProbe
from app.probes.idle import (
    LogindIdle,
    MacIdle,
    UnknownIdle,
    WindowsIdle,
    X11Idle,
    XScreenSaverInfo,
    idle_reader,
)
from app.probes.programs import ProgramsProbe
from tests.app.fake_nvml import NODE, FakeGpu, FakeNvml, Sample, probe_over

# --- GPU (NVML) ----------------------------------------------------------------

# --- programs and battery (psutil) ---------------------------------------------


class FakeProcess:
    def __init__(self, name: str | None, fails: bool = False) -> None:
        self._name, self._fails = name, fails

    @property
    def info(self) -> dict[str, Any]:
        if self._fails:
            raise PermissionError("access denied")
        return {"name": self._name}


def test_programs_are_lower_cased_and_unreadable_processes_skipped() -> None:
    processes = [
        FakeProcess("EldenRing.exe"),
        FakeProcess("steam"),
        FakeProcess(None),
        FakeProcess("secret", fails=True),
    ]
    assert ProgramsProbe(lambda: processes).read() == frozenset({"eldenring.exe", "steam"})


def test_a_failed_process_scan_reads_as_no_programs() -> None:
    def broken() -> Iterator[Any]:
        yield FakeProcess("first")
        raise OSError("scan failed")

    assert ProgramsProbe(broken).read() == frozenset({"first"})


def test_the_real_process_scan_sees_this_python() -> None:
    names = ProgramsProbe().read()
    assert any(name.startswith("python") for name in names)


@pytest.mark.parametrize(
    ("battery", "on_battery"),
    [
        (None, False),  # a desktop has no battery
        (SimpleNamespace(percent=80, power_plugged=True), False),
        (SimpleNamespace(percent=80, power_plugged=False), True),
        (SimpleNamespace(percent=80, power_plugged=None), None),
    ],
)
def test_battery_states(battery: Any, on_battery: bool | None) -> None:
    assert BatteryProbe(lambda: battery).read() is on_battery


def test_a_missing_battery_sensor_reads_unknown() -> None:
    def missing() -> Any:
        raise NotImplementedError("no sensor")

    assert BatteryProbe(missing).read() is None
    assert BatteryProbe().read() in (True, False, None)


# --- idle time: Windows --------------------------------------------------------


class FakeWindll:
    def __init__(self, last_input_ms: int, now_ms: int, ok: bool = True) -> None:
        def get_last_input_info(pointer: Any) -> int:
            info = pointer.contents
            assert info.cbSize == ctypes.sizeof(info)
            info.dwTime = last_input_ms
            return 1 if ok else 0

        self.user32 = SimpleNamespace(GetLastInputInfo=get_last_input_info)
        self.kernel32 = SimpleNamespace(GetTickCount=lambda: now_ms)


def test_windows_idle_is_the_time_since_the_last_input() -> None:
    assert WindowsIdle(FakeWindll(1_000_000, 1_090_500)).read() == pytest.approx(90.5)


def test_windows_idle_survives_the_tick_count_wrapping_after_49_days() -> None:
    assert WindowsIdle(FakeWindll(0xFFFFFF00, 0x100)).read() == pytest.approx(0.512)


def test_windows_idle_is_unknown_when_the_call_fails_or_windll_is_missing() -> None:
    assert WindowsIdle(FakeWindll(0, 10, ok=False)).read() is None
    assert WindowsIdle(None).read() is None  # no ctypes.windll on this OS


# --- idle time: macOS ----------------------------------------------------------

IOREG = """+-o IOHIDSystem  <class IOHIDSystem, id 0x100000452, registered, matched, active>
    {
      "HIDIdleTimeDelta" = 12
      "HIDIdleTime" = 2712345678
      "HIDParameters" = {"HIDClickTime"=500000000}
    }
"""


def test_macos_idle_reads_hid_idle_time_in_nanoseconds() -> None:
    commands: list[list[str]] = []

    def run(argv: list[str]) -> str:
        commands.append(argv)
        return IOREG

    assert MacIdle(run).read() == pytest.approx(2.712345678)
    assert commands == [["ioreg", "-c", "IOHIDSystem"]]


def test_macos_idle_is_unknown_without_ioreg_or_the_value() -> None:
    def missing(argv: list[str]) -> str:
        raise FileNotFoundError(argv[0])

    assert MacIdle(missing).read() is None
    assert MacIdle(lambda argv: "+-o Root\n").read() is None


# --- idle time: Linux logind ---------------------------------------------------


def logind_run(output: str, calls: list[list[str]]) -> Callable[[list[str]], str]:
    def run(argv: list[str]) -> str:
        calls.append(argv)
        if argv[0] == "loginctl":
            return output
        raise FileNotFoundError(argv[0])

    return run


def test_logind_idle_counts_from_idle_since_hint() -> None:
    calls: list[list[str]] = []
    output = "IdleHint=yes\nIdleSinceHint=1700000000000000\n"
    reader = LogindIdle("c7", logind_run(output, calls), clock=lambda: 1_700_000_600.0)
    assert reader.read() == pytest.approx(600.0)
    assert calls[0][:3] == ["loginctl", "show-session", "c7"]


def test_logind_active_session_is_zero_and_a_never_set_hint_unknown() -> None:
    active = "IdleHint=no\nIdleSinceHint=1700000000000000\n"
    assert LogindIdle("2", logind_run(active, []), clock=lambda: 1.8e9).read() == 0.0
    never = "IdleHint=no\nIdleSinceHint=0\n"
    assert LogindIdle("2", logind_run(never, []), clock=lambda: 1.8e9).read() is None


def test_logind_falls_back_to_busctl_then_to_unknown() -> None:
    calls: list[list[str]] = []

    def run(argv: list[str]) -> str:
        calls.append(argv)
        if argv[0] == "loginctl":
            raise subprocess.CalledProcessError(1, argv)
        return "b true\n" if argv[-1] == "IdleHint" else "t 1700000000000000\n"

    assert LogindIdle("auto", run, clock=lambda: 1_700_000_030.0).read() == pytest.approx(30.0)
    assert calls[1][:4] == [
        "busctl",
        "get-property",
        "org.freedesktop.login1",
        "/org/freedesktop/login1/session/auto",
    ]

    def nothing(argv: list[str]) -> str:
        raise FileNotFoundError(argv[0])

    assert LogindIdle("auto", nothing).read() is None


# --- idle time: Linux X11 ------------------------------------------------------


class FakeFunction:
    """A ctypes foreign function stand-in: callable, and takes restype/argtypes."""

    def __init__(self, body: Callable[..., Any]) -> None:
        self.body = body

    def __call__(self, *args: Any) -> Any:
        return self.body(*args)


def fake_x_libraries(
    idle_ms: int, *, extension: bool = True, closed: list[int] | None = None
) -> Callable[[str], Any]:
    closed = [] if closed is None else closed

    def query_info(display: Any, root: int, info: Any) -> int:
        assert root == 77
        info.contents.idle = idle_ms
        return 1

    x11 = SimpleNamespace(
        XOpenDisplay=FakeFunction(lambda name: 1234 if name == b":5" else None),
        XDefaultRootWindow=FakeFunction(lambda display: 77),
        XCloseDisplay=FakeFunction(lambda display: closed.append(display)),
        XFree=FakeFunction(lambda pointer: None),
    )
    xss = SimpleNamespace(
        XScreenSaverQueryExtension=FakeFunction(lambda d, e, r: 1 if extension else 0),
        XScreenSaverAllocInfo=FakeFunction(lambda: ctypes.pointer(XScreenSaverInfo())),
        XScreenSaverQueryInfo=FakeFunction(query_info),
    )
    return lambda name: x11 if "X11" in name else xss


def test_x11_idle_reads_the_screensaver_extension() -> None:
    closed: list[int] = []
    reader = X11Idle(":5", fake_x_libraries(42_500, closed=closed))
    assert reader.read() == pytest.approx(42.5)
    reader.close()
    assert closed == [1234]


def test_x11_idle_is_unknown_without_the_extension_display_or_library() -> None:
    closed: list[int] = []
    assert X11Idle(":5", fake_x_libraries(1, extension=False, closed=closed)).read() is None
    assert closed == [1234]  # the display opened to ask is closed again
    assert X11Idle(":9", fake_x_libraries(1)).read() is None

    def no_library(name: str) -> Any:
        raise OSError(f"{name}: cannot open shared object file")

    assert X11Idle(":5", no_library).read() is None


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("Xvfb") is None, reason="Xvfb is not installed")
def test_x11_idle_on_a_real_x_server(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_end), "-nolisten", "tcp", "-screen", "0", "320x240x24"],
        pass_fds=(write_end,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_end)
    try:
        with os.fdopen(read_end) as announced:
            number = announced.readline().strip()
        assert number, "Xvfb did not announce its display"
        reader = X11Idle(f":{number}")
        first = reader.read()
        second = reader.read()
        assert first is not None and second is not None, "libXss could not read the server"
        assert 0 <= first <= second
        reader.close()
    finally:
        server.terminate()
        server.wait(timeout=10)


# --- choosing the reader per OS --------------------------------------------------


def test_idle_reader_per_platform() -> None:
    assert isinstance(idle_reader("win32"), WindowsIdle)
    assert isinstance(idle_reader("darwin"), MacIdle)
    assert isinstance(idle_reader("linux", environ={}), LogindIdle)
    assert isinstance(idle_reader("sunos5"), UnknownIdle)


def test_linux_with_a_display_uses_x11_and_falls_back_to_logind() -> None:
    env = {"DISPLAY": ":5", "XDG_SESSION_ID": "c3"}
    with_x = idle_reader("linux", environ=env, load_library=fake_x_libraries(7_000))
    assert with_x.read() == pytest.approx(7.0)

    def no_library(name: str) -> Any:
        raise OSError(name)

    calls: list[list[str]] = []
    run = logind_run("IdleHint=yes\nIdleSinceHint=1000000\n", calls)
    without_x = idle_reader(
        "linux", environ=env, load_library=no_library, run=run, clock=lambda: 61.0
    )
    assert without_x.read() == pytest.approx(60.0)
    assert calls[0][2] == "c3"


# --- all together ----------------------------------------------------------------


class FixedIdle:
    def read(self) -> float | None:
        return 12.0


def test_system_probes_gather_one_reading_excluding_the_node() -> None:
    gpu = FakeGpu(temperature=66, samples=[Sample(NODE, 1, 99)])
    nvml = FakeNvml([gpu])
    probes = SystemProbes(
        gpu=probe_over(nvml),
        programs=ProgramsProbe(lambda: [FakeProcess("Steam.exe")]),
        battery=BatteryProbe(lambda: SimpleNamespace(power_plugged=False)),
        idle=FixedIdle(),
    )
    assert probes.read(NODE) == ProbeReadings(
        gpu_busy_by_others=False,
        gpu_temperature_c=66.0,
        running_programs=frozenset({"steam.exe"}),
        on_battery=True,
        idle_seconds=12.0,
    )
    gpu.samples = [Sample(NODE, 2, 99)]
    assert probes.read(None).gpu_busy_by_others is True  # no node: its pid is not excluded
    probes.close()
    assert nvml.shut_down


@pytest.mark.parametrize("platform", ["win32", "darwin", "linux"])
def test_system_probes_for_each_platform_read_without_raising(platform: str) -> None:
    readings = SystemProbes.for_platform(platform).read(None)
    assert isinstance(readings, ProbeReadings)
