"""Run by a Windows Python (under Wine in tests/windows/test_wine_calls.py): the real
Win32 calls behind the Windows-native behaviour, printed as one JSON object.

Loads each module by its file, not its package: the bare embeddable Python has
no psutil or Qt, and these modules need only the standard library.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load(relative: str) -> ModuleType:
    path = ROOT / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def child() -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", "import time\nwhile True: time.sleep(0.1)"],
        creationflags=load("app/windows_child.py").creation_flags("win32"),
    )


def wait_exit(process: subprocess.Popen[bytes], timeout_s: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return True
        time.sleep(0.1)
    return False


def main() -> None:
    windows_child = load("app/windows_child.py")
    shell = load("app/probes/windows_shell.py")
    idle = load("app/probes/idle.py")
    pdh = load("app/probes/pdh.py")
    results: dict[str, object] = {}

    holder = windows_child.JobObjectHolder()
    held = child()
    results["job_hold"] = holder.hold(held.pid)
    holder.close()  # the last handle: the kernel kills what the job holds
    results["job_close_kills_child"] = wait_exit(held)
    if held.poll() is None:
        held.kill()

    interrupted = child()
    time.sleep(1.0)
    results["ctrl_break_sent"] = windows_child.send_ctrl_break(
        interrupted.pid, windows_child._kernel32()
    )
    results["ctrl_break_stops_child"] = wait_exit(interrupted, 10.0)
    if interrupted.poll() is None:
        interrupted.kill()

    results["full_screen"] = shell.FullScreenProbe().read()
    results["on_battery"] = shell.WindowsBattery().read()
    results["idle_seconds"] = idle.WindowsIdle().read()
    counters = pdh.PdhCounters()
    results["pdh_engines"] = len(counters.read(r"\GPU Engine(*)\Utilization Percentage"))
    results["pdh_processor"] = counters.read(r"\Processor(*)\% Processor Time")
    counters.close()
    print(json.dumps(results))


if __name__ == "__main__":
    main()
