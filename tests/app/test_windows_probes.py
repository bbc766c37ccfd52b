"""Windows pause probes against fakes of the DLLs they call: PDH GPU counters,
SHQueryUserNotificationState, GetSystemPowerStatus, and how they join the rules."""

from __future__ import annotations

import ctypes
from typing import Any

import pytest

from app.pause_rules import REASON_GPU_BUSY, decide
from app.probe_readings import ProbeReadings
from app.probes import SystemProbes
from app.probes.gpu import UNKNOWN, GpuReading
from app.probes.gpu_pdh import (
    DEDICATED_USAGE,
    ENGINE_UTILISATION,
    GpuProbe,
    PdhGpuProbe,
    busiest_by_process,
)
from app.probes.pdh import (
    PDH_FMT_COUNTERVALUE_ITEM_W,
    PDH_FMT_DOUBLE,
    PDH_MORE_DATA,
    PdhCounters,
)
from app.probes.programs import ProgramsProbe
from app.probes.windows_shell import (
    QUNS_ACCEPTS_NOTIFICATIONS,
    QUNS_BUSY,
    QUNS_PRESENTATION_MODE,
    QUNS_RUNNING_D3D_FULL_SCREEN,
    SYSTEM_POWER_STATUS,
    FullScreenProbe,
    WindowsBattery,
)
from app.settings_model import AppSettings

NODE = 4242
GAME = 777


def engine(pid: int, eng: int, kind: str) -> str:
    return f"pid_{pid}_luid_0x00000000_0x0000C6F1_phys_0_eng_{eng}_engtype_{kind}"


class FakeCounters:
    def __init__(self, values: dict[str, dict[str, float]]) -> None:
        self.values = values
        self.closed = False

    def read(self, path: str) -> dict[str, float]:
        return self.values.get(path, {})

    def close(self) -> None:
        self.closed = True


def test_task_managers_figure_sums_engines_of_one_type_and_takes_the_busiest_type() -> None:
    values = {
        engine(GAME, 0, "3D"): 30.0,
        engine(GAME, 1, "3D"): 25.0,
        engine(GAME, 2, "VideoDecode"): 10.0,
        engine(NODE, 3, "Compute_0"): 90.0,
        "not an engine": 50.0,
    }
    assert busiest_by_process(values) == {GAME: 55.0, NODE: 90.0}


def test_a_game_on_any_card_is_busy_and_the_nodes_own_work_is_not() -> None:
    counters = FakeCounters({ENGINE_UTILISATION: {engine(NODE, 0, "Compute_0"): 99.0}})
    probe = PdhGpuProbe(counters, own_pid=1)
    assert probe.read((NODE,)) == GpuReading(busy_by_others=False, temperature_c=None)
    counters.values[ENGINE_UTILISATION][engine(GAME, 0, "3D")] = 40.0
    assert probe.read((NODE,)).busy_by_others is True
    counters.values[ENGINE_UTILISATION][engine(GAME, 0, "3D")] = 5.0  # a browser's idle page
    assert probe.read((NODE,)).busy_by_others is False


def test_no_counters_read_unknown_and_memory_is_per_adapter() -> None:
    assert PdhGpuProbe(FakeCounters({}), own_pid=1).read() == UNKNOWN
    memory = {DEDICATED_USAGE: {"luid_0x00000000_0x0000C6F1_phys_0": 2.5e9}}
    probe = PdhGpuProbe(FakeCounters(memory), own_pid=1)
    assert probe.available()
    assert probe.dedicated_memory_used() == {"luid_0x00000000_0x0000C6F1_phys_0": 2_500_000_000}
    assert not PdhGpuProbe(FakeCounters({}), own_pid=1).available()


class FakeSource:
    def __init__(self, available: bool, reading: GpuReading) -> None:
        self._available, self.reading, self.closed = available, reading, False

    def available(self) -> bool:
        return self._available

    def read(self, exclude_pids: Any = ()) -> GpuReading:
        return self.reading

    def close(self) -> None:
        self.closed = True


def test_nvml_is_used_where_it_reads_a_card_and_the_counters_otherwise() -> None:
    nvml_reading = GpuReading(busy_by_others=False, temperature_c=70.0)
    pdh_reading = GpuReading(busy_by_others=True, temperature_c=None)
    with_nvidia = GpuProbe(FakeSource(True, nvml_reading), FakeSource(True, pdh_reading))
    assert with_nvidia.read() == nvml_reading
    amd = GpuProbe(FakeSource(False, UNKNOWN), FakeSource(True, pdh_reading))
    assert amd.read() == pdh_reading and amd.available()
    nothing = GpuProbe(FakeSource(False, UNKNOWN), None)
    assert nothing.read() == UNKNOWN and not nothing.available()


class FakePdh:
    """pdh.dll's calls, answering one formatted array as Windows lays it out."""

    def __init__(self, values: dict[str, float]) -> None:
        self.values = values
        self.calls: list[str] = []
        self.paths: list[str] = []
        self._keep: list[Any] = []

    def PdhOpenQueryW(self, source: Any, user: Any, query: Any) -> int:
        self.calls.append("open")
        ctypes.cast(query, ctypes.POINTER(ctypes.c_void_p))[0] = 11
        return 0

    def PdhAddEnglishCounterW(self, query: Any, path: str, user: Any, counter: Any) -> int:
        self.calls.append("add")
        self.paths.append(path)
        ctypes.cast(counter, ctypes.POINTER(ctypes.c_void_p))[0] = 22
        return 0

    def PdhCollectQueryData(self, query: Any) -> int:
        self.calls.append("collect")
        return 0

    def PdhGetFormattedCounterArrayW(
        self, counter: Any, fmt: int, size: Any, count: Any, buffer: Any
    ) -> int:
        assert fmt & PDH_FMT_DOUBLE
        needed = ctypes.sizeof(PDH_FMT_COUNTERVALUE_ITEM_W) * len(self.values)
        size_p = ctypes.cast(size, ctypes.POINTER(ctypes.c_uint32))
        count_p = ctypes.cast(count, ctypes.POINTER(ctypes.c_uint32))
        if buffer is None:
            size_p[0], count_p[0] = needed, len(self.values)
            return PDH_MORE_DATA
        items = ctypes.cast(buffer, ctypes.POINTER(PDH_FMT_COUNTERVALUE_ITEM_W))
        for index, (name, value) in enumerate(self.values.items()):
            text = ctypes.create_unicode_buffer(name)
            self._keep.append(text)
            items[index].szName = ctypes.cast(text, ctypes.c_wchar_p).value
            items[index].FmtValue.CStatus = 0
            items[index].FmtValue.doubleValue = value
        count_p[0] = len(self.values)
        return 0

    def PdhCloseQuery(self, query: Any) -> int:
        self.calls.append("close")
        return 0


def test_pdh_counters_collect_twice_for_a_rate_and_read_the_formatted_array() -> None:
    pdh = FakePdh({engine(GAME, 0, "3D"): 42.5, engine(NODE, 1, "Compute_0"): 7.0})
    counters = PdhCounters(pdh)
    assert counters.read(ENGINE_UTILISATION) == {
        engine(GAME, 0, "3D"): 42.5,
        engine(NODE, 1, "Compute_0"): 7.0,
    }
    assert pdh.calls == ["open", "add", "collect", "collect"]
    assert pdh.paths == [ENGINE_UTILISATION]
    counters.read(ENGINE_UTILISATION)  # a kept counter: one more collection, no new add
    assert pdh.calls[-1] == "collect" and pdh.calls.count("add") == 1
    counters.close()
    assert pdh.calls[-1] == "close"


def test_pdh_that_cannot_open_reads_empty_from_then_on() -> None:
    class Refusing(FakePdh):
        def PdhOpenQueryW(self, source: Any, user: Any, query: Any) -> int:
            self.calls.append("open")
            return 0xC0000BB8  # PDH_CSTATUS_NO_OBJECT

    pdh = Refusing({})
    counters = PdhCounters(pdh)
    assert counters.read(ENGINE_UTILISATION) == {}
    assert counters.read(ENGINE_UTILISATION) == {}
    assert pdh.calls == ["open"]
    assert PdhCounters(object()).read(ENGINE_UTILISATION) == {}


def test_a_refused_counter_path_leaves_the_others_readable() -> None:
    class RefusesEngines(FakePdh):
        def PdhAddEnglishCounterW(self, query: Any, path: str, user: Any, counter: Any) -> int:
            if path == ENGINE_UTILISATION:
                self.calls.append("refused")
                return 0xC0000BB8  # PDH_CSTATUS_NO_OBJECT: an older Windows, or Wine
            return super().PdhAddEnglishCounterW(query, path, user, counter)

    pdh = RefusesEngines({"luid_0x0_0x1_phys_0": 1.0e9})
    counters = PdhCounters(pdh)
    assert counters.read(ENGINE_UTILISATION) == {}
    assert counters.read(ENGINE_UTILISATION) == {}  # not asked again
    assert pdh.calls.count("refused") == 1
    assert counters.read(DEDICATED_USAGE) == {"luid_0x0_0x1_phys_0": 1.0e9}


class FakeShell32:
    def __init__(self, state: int, result: int = 0) -> None:
        self.state, self.result = state, result

    def SHQueryUserNotificationState(self, out: Any) -> int:
        ctypes.cast(out, ctypes.POINTER(ctypes.c_int))[0] = self.state
        return self.result


class FakeWindll:
    def __init__(self, shell32: Any = None, kernel32: Any = None) -> None:
        self.shell32, self.kernel32 = shell32, kernel32


@pytest.mark.parametrize(
    ("state", "full_screen"),
    [
        (QUNS_RUNNING_D3D_FULL_SCREEN, True),
        (QUNS_BUSY, True),
        (QUNS_PRESENTATION_MODE, True),
        (QUNS_ACCEPTS_NOTIFICATIONS, False),
    ],
)
def test_full_screen_games_and_presentations_are_seen(state: int, full_screen: bool) -> None:
    assert FullScreenProbe(FakeWindll(shell32=FakeShell32(state))).read() is full_screen


def test_a_failed_notification_query_or_no_shell32_is_unknown() -> None:
    assert FullScreenProbe(FakeWindll(shell32=FakeShell32(3, result=-1))).read() is None
    assert FullScreenProbe(FakeWindll()).read() is None


class FakeKernel32:
    def __init__(self, ac: int, flag: int, ok: int = 1) -> None:
        self.ac, self.flag, self.ok = ac, flag, ok

    def GetSystemPowerStatus(self, out: Any) -> int:
        status = ctypes.cast(out, ctypes.POINTER(SYSTEM_POWER_STATUS))[0]
        status.ACLineStatus, status.BatteryFlag = self.ac, self.flag
        return self.ok


@pytest.mark.parametrize(
    ("ac", "flag", "on_battery"),
    [
        (0, 0, True),  # laptop unplugged
        (1, 8, False),  # plugged in, charging
        (1, 128, False),  # a desktop: no system battery
        (255, 1, None),  # the line state is unknown
        (0, 255, True),  # battery state unknown, but the line is off
    ],
)
def test_battery_from_the_system_power_status(ac: int, flag: int, on_battery: bool | None) -> None:
    assert WindowsBattery(FakeWindll(kernel32=FakeKernel32(ac, flag))).read() is on_battery


def test_a_refused_power_status_is_unknown() -> None:
    assert WindowsBattery(FakeWindll(kernel32=FakeKernel32(0, 0, ok=0))).read() is None
    assert WindowsBattery(FakeWindll()).read() is None


class Fixed:
    def __init__(self, value: Any) -> None:
        self.value = value

    def read(self) -> Any:
        return self.value


def test_a_full_screen_game_pauses_under_the_graphics_card_rule() -> None:
    probes = SystemProbes(
        gpu=FakeSource(False, UNKNOWN),
        programs=ProgramsProbe(lambda: []),
        battery=Fixed(False),
        idle=Fixed(None),
        full_screen=Fixed(True),
    )
    readings = probes.read(NODE)
    assert readings.full_screen is True
    decision = decide(AppSettings(), readings)
    assert decision.pause and decision.reason == REASON_GPU_BUSY
    off = AppSettings(pause_when_gpu_busy=False)
    assert not decide(off, readings).pause
    assert not decide(AppSettings(), ProbeReadings(full_screen=None)).pause


def test_windows_probes_are_chosen_for_windows_and_read_without_raising_here() -> None:
    probes = SystemProbes.for_platform("win32")
    assert isinstance(probes.battery, WindowsBattery)
    assert isinstance(probes.full_screen, FullScreenProbe)
    assert isinstance(probes.gpu, GpuProbe)
    readings = probes.read(None)
    assert readings.full_screen is None and readings.on_battery is None
