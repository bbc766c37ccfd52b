"""How the app holds its node child on Windows: a Job Object, and Ctrl-Break as the fallback stop.

On POSIX an app that dies closes the child's stdin, and ``--control stdin``
makes the end of stdin a stop (app/cli/node_control.py). Windows gives a
stronger guarantee: a child assigned to a Job Object created with
``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`` dies when the last handle to the job
closes, which the kernel does when the app's process ends, however it ends.
Stop and pause still go through the control pipe first (the node deregisters
at the tracker); only a child that ignores the pipe gets ``CTRL_BREAK_EVENT``,
which Python turns into ``SIGBREAK`` (a stop in node_control). There are no
POSIX signals or process groups on Windows: the child is started with
``CREATE_NEW_PROCESS_GROUP`` so that Ctrl-Break reaches it alone.

A console event can only be sent from the child's console: an app started
from a terminal shares it; a GUI app without one (the installed app)
attaches to the child's, ignores the event itself while it is sent, and
detaches (:func:`send_ctrl_break`). Every Win32 call goes through
an injected ``kernel32`` so that the order of calls is tested on any OS
against a fake (tests/app/test_windows_child.py); nothing here imports a
Windows-only module at import time.
"""

from __future__ import annotations

import ctypes
import logging
import sys
from typing import Any, Protocol

log = logging.getLogger(__name__)

CREATE_NEW_PROCESS_GROUP = 0x00000200
CTRL_BREAK_EVENT = 1
JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x00002000
JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS = 9
PROCESS_SET_QUOTA = 0x0100
PROCESS_TERMINATE = 0x0001


class IO_COUNTERS(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in (
        "ReadOperationCount", "WriteOperationCount", "OtherOperationCount",
        "ReadTransferCount", "WriteTransferCount", "OtherTransferCount",
    )]  # fmt: skip


class JOBOBJECT_BASIC_LIMIT_INFORMATION(ctypes.Structure):
    _fields_ = [
        ("PerProcessUserTimeLimit", ctypes.c_int64),
        ("PerJobUserTimeLimit", ctypes.c_int64),
        ("LimitFlags", ctypes.c_uint32),
        ("MinimumWorkingSetSize", ctypes.c_size_t),
        ("MaximumWorkingSetSize", ctypes.c_size_t),
        ("ActiveProcessLimit", ctypes.c_uint32),
        ("Affinity", ctypes.c_size_t),
        ("PriorityClass", ctypes.c_uint32),
        ("SchedulingClass", ctypes.c_uint32),
    ]


class JOBOBJECT_EXTENDED_LIMIT_INFORMATION(ctypes.Structure):
    _fields_ = [
        ("BasicLimitInformation", JOBOBJECT_BASIC_LIMIT_INFORMATION),
        ("IoInfo", IO_COUNTERS),
        ("ProcessMemoryLimit", ctypes.c_size_t),
        ("JobMemoryLimit", ctypes.c_size_t),
        ("PeakProcessMemoryUsed", ctypes.c_size_t),
        ("PeakJobMemoryUsed", ctypes.c_size_t),
    ]


class ChildHolder(Protocol):
    """What ties a started child's life to the app's."""

    def hold(self, pid: int) -> bool: ...

    def interrupt(self, pid: int) -> bool: ...

    def close(self) -> None: ...


class NoHolder:
    """POSIX: the closed stdin pipe is the tie, and the stop has no fallback but kill."""

    def hold(self, pid: int) -> bool:
        return False

    def interrupt(self, pid: int) -> bool:
        return False

    def close(self) -> None:
        return None


def _kernel32() -> Any:
    """kernel32 with 64-bit handles declared (ctypes' default int would truncate them)."""
    k32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    handle = ctypes.c_void_p
    k32.CreateJobObjectW.restype = handle
    k32.CreateJobObjectW.argtypes = [ctypes.c_void_p, ctypes.c_wchar_p]
    k32.OpenProcess.restype = handle
    k32.OpenProcess.argtypes = [ctypes.c_uint32, ctypes.c_int, ctypes.c_uint32]
    k32.SetInformationJobObject.argtypes = [handle, ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32]
    k32.AssignProcessToJobObject.argtypes = [handle, handle]
    k32.CloseHandle.argtypes = [handle]
    k32.GetConsoleWindow.restype = handle
    return k32


class JobObjectHolder:
    """One Job Object for all of the app's node children, killed with the app."""

    def __init__(self, kernel32: Any = None) -> None:
        self._kernel32 = kernel32
        self._job: int | None = None

    @property
    def kernel32(self) -> Any:
        if self._kernel32 is None:
            self._kernel32 = _kernel32()
        return self._kernel32

    def _ensure_job(self) -> int | None:
        if self._job is not None:
            return self._job
        k32 = self.kernel32
        job = k32.CreateJobObjectW(None, None)
        if not job:
            log.warning("windows: CreateJobObjectW failed; the node may outlive a crashed app")
            return None
        info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION()
        info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
        ok = k32.SetInformationJobObject(
            job,
            JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS,
            ctypes.byref(info),
            ctypes.sizeof(info),
        )
        if not ok:
            log.warning("windows: the job's kill-on-close limit was refused")
            k32.CloseHandle(job)
            return None
        self._job = int(job)
        return self._job

    def hold(self, pid: int) -> bool:
        """Put ``pid`` in the job; False (logged) when Windows refuses."""
        try:
            job = self._ensure_job()
            if job is None:
                return False
            k32 = self.kernel32
            process = k32.OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, False, pid)
            if not process:
                log.warning("windows: cannot open the node child %s to hold it", pid)
                return False
            try:
                ok = bool(k32.AssignProcessToJobObject(job, process))
            finally:
                k32.CloseHandle(process)
        except (OSError, AttributeError) as exc:  # no kernel32 here
            log.warning("windows: cannot hold the node child in a job (%s)", exc)
            return False
        if not ok:
            log.warning("windows: AssignProcessToJobObject refused the node child %s", pid)
        return ok

    def interrupt(self, pid: int) -> bool:
        try:
            return send_ctrl_break(pid, self.kernel32)
        except (OSError, AttributeError) as exc:
            log.warning("windows: cannot send Ctrl-Break to %s (%s)", pid, exc)
            return False

    def close(self) -> None:
        """Closing the last handle kills every child still in the job (the app is quitting)."""
        if self._job is not None:
            self.kernel32.CloseHandle(self._job)
            self._job = None


def send_ctrl_break(pid: int, kernel32: Any) -> bool:
    """``CTRL_BREAK_EVENT`` to the process group ``pid`` leads.

    An app started from a terminal shares its console with the child: the event
    goes straight to the child's group. A GUI app has no console (its child got
    a hidden one): attach to the child's, ignore Ctrl events here meanwhile,
    send, then detach and listen again.
    """
    if kernel32.GetConsoleWindow():
        return bool(kernel32.GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, pid))
    if not kernel32.AttachConsole(pid):
        return False
    try:
        kernel32.SetConsoleCtrlHandler(None, True)
        sent = bool(kernel32.GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, pid))
    finally:
        kernel32.FreeConsole()
        kernel32.SetConsoleCtrlHandler(None, False)
    return sent


def creation_flags(platform: str = sys.platform) -> int:
    """Flags to add to a child's ``CreateProcess`` (none on POSIX)."""
    return CREATE_NEW_PROCESS_GROUP if platform == "win32" else 0


def child_holder(platform: str = sys.platform, kernel32: Any = None) -> ChildHolder:
    return JobObjectHolder(kernel32) if platform == "win32" else NoHolder()
