"""``meshnet-app`` on a real X server without a system tray: it idles quietly and
ends when its window is closed the way a window manager closes it, or on SIGTERM.

Without a tray the status window is the app, so closing it quits. Qt 6's quit()
asks every window to close first; a window that declined and asked to quit again
once made the app spin at a core's worth of CPU and never end. Here the real app
(``python -m app.ui.main``, the xcb platform on Xvfb) is measured with psutil:
its CPU over 10 idle seconds, then over the close until it has exited.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.app.conftest import CHILD_KEYRING
from tests.app.ui.x_desktop import close_like_a_window_manager, visible_windows, x_desktop
from tests.tracker_service.server_process import REPO

pytestmark = pytest.mark.slow

IDLE_SECONDS = 10.0
IDLE_CORE_SHARE = 0.01  # under 1 % of one core
SHOWN_WITHIN_S = 90.0  # a loaded CI machine may start Python and Qt slowly
EXIT_WITHIN_S = 30.0


@pytest.fixture
def plain_desktop(tmp_path: Path) -> Iterator[str]:
    with x_desktop(tmp_path, tray=False) as display:
        yield display


def start_app(tmp_path: Path, display: str) -> subprocess.Popen[bytes]:
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        "DISPLAY": display,
        "QT_QPA_PLATFORM": "xcb",
        "PYTHONPATH": str(REPO),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_RUNTIME_DIR": str(home / "run"),
        "MESHNET_HOME": str(tmp_path / "meshnet-home"),
        "PYTHON_KEYRING_BACKEND": CHILD_KEYRING,
    }
    (home / "run").mkdir(mode=0o700)
    log = (tmp_path / "app.log").open("wb")
    # --hidden: no first-run wizard; without a tray the status window shows anyway
    return subprocess.Popen(
        [sys.executable, "-m", "app.ui.main", "--hidden"],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def wait_for_window(app: subprocess.Popen[bytes], display: str, tmp_path: Path) -> list[int]:
    deadline = time.monotonic() + SHOWN_WITHIN_S
    while time.monotonic() < deadline:
        assert app.poll() is None, (tmp_path / "app.log").read_text(errors="replace")[-3000:]
        windows = visible_windows(display, "^MeshNet$")
        if windows:
            return windows
        time.sleep(0.5)
    raise AssertionError("the status window never appeared")


def cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def wait_for_exit(app: subprocess.Popen[bytes], tmp_path: Path) -> int:
    try:
        return app.wait(EXIT_WITHIN_S)
    except subprocess.TimeoutExpired:
        app.kill()
        app.wait(10)
        log = (tmp_path / "app.log").read_text(errors="replace")[-3000:]
        message = f"the app was still running {EXIT_WITHIN_S:.0f} s later\n{log}"
        raise AssertionError(message) from None


@pytest.mark.parametrize("how", ["window-manager-close", "sigterm"])
def test_without_a_tray_the_app_idles_and_ends_when_closed(
    tmp_path: Path, plain_desktop: str, how: str
) -> None:
    app = start_app(tmp_path, plain_desktop)
    try:
        windows = wait_for_window(app, plain_desktop, tmp_path)
        process = psutil.Process(app.pid)
        time.sleep(2.0)  # let start-up work (first probes, the credit read) finish
        before, started = cpu_seconds(process), time.monotonic()
        time.sleep(IDLE_SECONDS)
        idle_share = (cpu_seconds(process) - before) / (time.monotonic() - started)
        before, started = cpu_seconds(process), time.monotonic()
        if how == "sigterm":
            app.send_signal(signal.SIGTERM)
        else:
            for window in windows:
                close_like_a_window_manager(plain_desktop, window)
        ended_cpu = before
        while app.poll() is None and time.monotonic() - started < EXIT_WITHIN_S:
            ended_cpu = cpu_seconds(process)  # the last reading before it is gone
            time.sleep(0.2)
        code = wait_for_exit(app, tmp_path)
    finally:
        if app.poll() is None:
            app.kill()
            app.wait(10)
    assert idle_share < IDLE_CORE_SHARE, f"idle app used {idle_share:.1%} of a core"
    assert code == 0, (tmp_path / "app.log").read_text(errors="replace")[-3000:]
    # ending takes a moment of work, not a spin until killed
    assert ended_cpu - before < 2.0, f"closing cost {ended_cpu - before:.2f} s of CPU"
