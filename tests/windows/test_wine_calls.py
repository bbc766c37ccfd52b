"""The real Win32 calls under Wine: a Windows CPython runs tests/windows/real_calls.py.

Skipped unless Wine (Debian's wine64) and the Windows CPython that
``make installer-windows`` caches (installers/windows_cross.py) are both here.
What Wine 8 implements is asserted; what it does not (Ctrl-Break to a process
group: GenerateConsoleCtrlEvent fails there, real GPU counters) only a Windows
PC can check (installers/README.md).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path, PureWindowsPath

import pytest

from installers.windows_cross import PY_TAG, WINE_ENV, cache_root, find_wine

ROOT = Path(__file__).resolve().parents[2]
WINE = find_wine()
PYTHON = cache_root() / f"python-{PY_TAG}" / "python.exe"

pytestmark = pytest.mark.skipif(
    WINE is None or not PYTHON.is_file(),
    reason="needs wine64 and the cached Windows CPython (make installer-windows fetches it)",
)


def windows_path(path: Path) -> str:
    return str(PureWindowsPath("Z:\\", *path.resolve().parts[1:]))


def test_the_real_windows_calls_answer_under_wine(tmp_path: Path) -> None:
    env = dict(os.environ)
    env.update(WINE_ENV)
    env["WINEPREFIX"] = str(cache_root() / "wineprefix-calls")
    done = subprocess.run(
        [str(WINE), str(PYTHON), windows_path(ROOT / "tests" / "windows" / "real_calls.py")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert results["job_hold"] is True  # AssignProcessToJobObject took the child
    assert results["job_close_kills_child"] is True  # closing the job killed it
    assert results["full_screen"] in (True, False)  # SHQueryUserNotificationState answered
    assert results["on_battery"] in (True, False)  # GetSystemPowerStatus answered
    assert isinstance(results["idle_seconds"], float)  # GetLastInputInfo answered
    assert isinstance(results["pdh_engines"], int)  # PDH answered (Wine has no GPU counters)
