"""The node child's Windows hold (Job Object, Ctrl-Break) against a fake kernel32, and
the app's NodeProcess using a holder with a real child."""

from __future__ import annotations

import ctypes
import sys
from typing import Any

import pytest

from app.windows_child import (
    CREATE_NEW_PROCESS_GROUP,
    CTRL_BREAK_EVENT,
    JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JobObjectHolder,
    NoHolder,
    child_holder,
    creation_flags,
    send_ctrl_break,
)


class FakeKernel32:
    """Records each Win32 call; the answers are set per test."""

    def __init__(self, **answers: Any) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.answers = {
            "CreateJobObjectW": 77,
            "SetInformationJobObject": 1,
            "OpenProcess": 55,
            "AssignProcessToJobObject": 1,
            "CloseHandle": 1,
            "GetConsoleWindow": 0,  # a GUI app: no console of its own
            "AttachConsole": 1,
            "FreeConsole": 1,
            "SetConsoleCtrlHandler": 1,
            "GenerateConsoleCtrlEvent": 1,
            **answers,
        }
        self.limit_flags: int | None = None

    def __getattr__(self, name: str) -> Any:
        if name not in self.answers:
            raise AttributeError(name)

        def call(*args: Any) -> Any:
            self.calls.append((name, args))
            if name == "SetInformationJobObject":
                info = ctypes.cast(args[2], ctypes.POINTER(JOBOBJECT_EXTENDED_LIMIT_INFORMATION))
                self.limit_flags = info.contents.BasicLimitInformation.LimitFlags
            return self.answers[name]

        return call

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]


def test_the_child_is_put_in_a_job_that_kills_it_when_the_app_goes() -> None:
    k32 = FakeKernel32()
    holder = JobObjectHolder(k32)
    assert holder.hold(1234)
    assert k32.names() == [
        "CreateJobObjectW",
        "SetInformationJobObject",
        "OpenProcess",
        "AssignProcessToJobObject",
        "CloseHandle",
    ]
    assert k32.calls[1][1][1] == JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS
    assert k32.limit_flags == JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
    assert k32.calls[2][1][2] == 1234
    assert k32.calls[3][1] == (77, 55)  # the job, the child's handle
    holder.hold(1235)  # a second child joins the same job
    assert k32.names().count("CreateJobObjectW") == 1
    holder.close()
    assert k32.calls[-1] == ("CloseHandle", (77,))


def test_the_extended_limit_structure_has_the_64_bit_windows_size() -> None:
    if ctypes.sizeof(ctypes.c_void_p) == 8:
        assert ctypes.sizeof(JOBOBJECT_EXTENDED_LIMIT_INFORMATION) == 144


@pytest.mark.parametrize(
    "refusal", [{"CreateJobObjectW": 0}, {"SetInformationJobObject": 0}, {"OpenProcess": 0}]
)
def test_a_refused_job_call_reads_false_and_never_raises(refusal: dict[str, int]) -> None:
    assert JobObjectHolder(FakeKernel32(**refusal)).hold(1234) is False


def test_no_kernel32_reads_false() -> None:
    assert JobObjectHolder(object()).hold(1) is False
    assert JobObjectHolder(object()).interrupt(1) is False


def test_ctrl_break_attaches_to_the_childs_console_ignores_it_here_and_detaches() -> None:
    k32 = FakeKernel32()
    assert send_ctrl_break(4321, k32)
    assert k32.calls == [
        ("GetConsoleWindow", ()),
        ("AttachConsole", (4321,)),
        ("SetConsoleCtrlHandler", (None, True)),
        ("GenerateConsoleCtrlEvent", (CTRL_BREAK_EVENT, 4321)),
        ("FreeConsole", ()),
        ("SetConsoleCtrlHandler", (None, False)),
    ]


def test_an_app_with_a_console_sends_ctrl_break_to_the_shared_console_directly() -> None:
    k32 = FakeKernel32(GetConsoleWindow=99)
    assert send_ctrl_break(4321, k32)
    assert k32.names() == ["GetConsoleWindow", "GenerateConsoleCtrlEvent"]  # never detaches


def test_ctrl_break_to_a_child_without_a_console_is_false() -> None:
    k32 = FakeKernel32(AttachConsole=0)
    assert send_ctrl_break(4321, k32) is False
    assert "GenerateConsoleCtrlEvent" not in k32.names()


def test_the_platform_picks_the_holder_and_the_process_group_flag() -> None:
    assert isinstance(child_holder("win32", FakeKernel32()), JobObjectHolder)
    assert isinstance(child_holder("linux"), NoHolder)
    assert creation_flags("win32") == CREATE_NEW_PROCESS_GROUP
    assert creation_flags("linux") == 0


class RecordingHolder:
    def __init__(self) -> None:
        self.held: list[int] = []
        self.interrupted: list[int] = []

    def hold(self, pid: int) -> bool:
        self.held.append(pid)
        return True

    def interrupt(self, pid: int) -> bool:
        self.interrupted.append(pid)
        return False  # as where no console can be reached: the kill follows

    def close(self) -> None:
        pass


def test_node_process_holds_its_child_and_interrupts_one_that_ignores_the_pipe(
    qtbot: Any,
) -> None:
    from app.ui.node_process import NodeProcess

    holder = RecordingHolder()
    process = NodeProcess(holder=holder)
    ignores_stdin = "import time\nwhile True: time.sleep(0.1)"
    with qtbot.waitSignal(process.started, timeout=20_000):
        process.start([sys.executable, "-c", ignores_stdin])
    pid = process.pid
    assert pid is not None and holder.held == [pid]
    with qtbot.waitSignal(process.exited, timeout=30_000) as exited:
        process.stop(timeout_s=0.2)
    assert holder.interrupted == [pid]
    assert exited.args == [-1, True]
