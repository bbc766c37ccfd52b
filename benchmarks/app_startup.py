"""How light the contributor app is: launch to window shown, memory, idle CPU.

Runs the real ``meshnet-app`` (offscreen, no tray, so the status window is the
main window) and, in the same run, the reference: a bare PySide6 program that
shows one empty window — the floor any Qt app of ours stands on. Then turns
Contribute on against a real tracker on loopback, waits for the node child to
serve the default model, and measures the GUI process's own CPU while idle
(the node's is its own process and not counted).

    python benchmarks/app_startup.py [--rounds 5] [--idle-seconds 30]

Targets (issue 8): window shown ≤ 1.5 s, GUI RSS ≤ 150 MB without torch,
idle CPU ≤ 1 %. Prints each figure with the reference's, and last
``ratio: R`` = the app's launch time over the bare window's (the price of
everything MeshNet adds at start-up).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SHOWN = re.compile(r"window shown ([0-9.]+) s after launch")
BARE_WINDOW = """
import time, psutil
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QWidget
app = QApplication([])
w = QWidget(); w.resize(820, 760); w.show()
def shown():
    print(f"shown {time.time() - psutil.Process().create_time():.3f}", flush=True)
    print(f"rss {psutil.Process().memory_info().rss}", flush=True)
    app.quit()
QTimer.singleShot(0, shown)
app.exec()
"""


def environment(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "QT_QPA_PLATFORM": "offscreen",
            "XDG_CONFIG_HOME": str(home / "config"),
            "MESHNET_HOME": str(home / "meshnet"),
            "PYTHONPATH": str(REPO),
            # The node child keeps its key in a keyring; a headless box has none.
            "PYTHON_KEYRING_BACKEND": "tests.core.keyring_backend.DictKeyring",
        }
    )
    return env


def bare_window(env: dict[str, str]) -> tuple[float, int]:
    out = subprocess.run(
        [sys.executable, "-c", BARE_WINDOW], env=env, capture_output=True, text=True, check=True
    ).stdout
    shown = float(re.search(r"shown ([0-9.]+)", out).group(1))  # type: ignore[union-attr]
    rss = int(re.search(r"rss ([0-9]+)", out).group(1))  # type: ignore[union-attr]
    return shown, rss


def launch_app(env: dict[str, str], home: Path) -> tuple[subprocess.Popen[bytes], float]:
    """Start meshnet-app; return it and its launch-to-shown seconds (from its log)."""
    log = home / "meshnet" / "logs" / "app.log"
    log.unlink(missing_ok=True)
    app = subprocess.Popen(
        [sys.executable, "-m", "app.ui.main"],
        env=env,
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if app.poll() is not None:
            raise SystemExit(f"meshnet-app exited with {app.returncode}; see {log}")
        match = SHOWN.search(log.read_text(encoding="utf-8")) if log.exists() else None
        if match:
            return app, float(match.group(1))
        time.sleep(0.05)
    app.kill()
    raise SystemExit(f"meshnet-app showed no window within 60 s; see {log}")


def stop(app: subprocess.Popen[bytes]) -> None:
    app.terminate()
    try:
        app.wait(30)
    except subprocess.TimeoutExpired:
        app.kill()
        app.wait(5)


def save_settings(home: Path, tracker_url: str, model_dir: Path, contribute: bool) -> None:
    from PySide6.QtCore import QSettings

    from app.settings_model import AppSettings
    from app.ui.main import CONTRIBUTE_KEY
    from app.ui.settings_store import SettingsStore

    path = home / "config" / "MeshNet" / "MeshNet.conf"
    path.parent.mkdir(parents=True, exist_ok=True)
    qsettings = QSettings(str(path), QSettings.Format.IniFormat)
    store = SettingsStore(qsettings)  # owns qsettings: keep it alive while writing
    store.save(AppSettings(tracker_url=tracker_url, model=str(model_dir), layers=(0, 30)))
    qsettings.setValue(CONTRIBUTE_KEY, "true" if contribute else "false")
    qsettings.sync()


def start_tracker(home: Path) -> tuple[subprocess.Popen[bytes], str]:
    from tests.tracker_service.server_process import free_port

    port = free_port()
    env = dict(os.environ, MESHNET_HOME=str(home / "tracker"), MESHNET_TRACKER_LOG_LEVEL="warning")
    tracker = subprocess.Popen(
        [sys.executable, "-m", "tracker_service.cli", "serve", "--port", str(port), "--db",
         f"sqlite:///{home / 'tracker.db'}", "--allow-private-endpoints"],
        env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(url + "/api/v1/state", timeout=1).status_code == 200:
                return tracker, url
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit("the tracker did not start")


def wait_serving(url: str, app: subprocess.Popen[bytes], timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if app.poll() is not None:
            raise SystemExit(f"meshnet-app exited with {app.returncode}")
        nodes = httpx.get(url + "/api/v1/state", timeout=5).json().get("nodes", [])
        if any(n.get("live") for n in nodes):
            return
        time.sleep(0.5)
    raise SystemExit("the app's node did not start serving")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--idle-seconds", type=float, default=30.0)
    args = parser.parse_args()

    from core.models.default_model import ensure_default_model

    with tempfile.TemporaryDirectory(prefix="meshnet-app-bench-") as tmp:
        home = Path(tmp)
        env = environment(home)
        model_dir = ensure_default_model(home / "models")
        tracker, url = start_tracker(home)
        try:
            save_settings(home, url, model_dir, contribute=False)
            ours: list[float] = []
            bare: list[float] = []
            rss_at_start: list[int] = []
            bare_rss: list[int] = []
            for _ in range(args.rounds):  # interleaved, so drift hits both alike
                shown, rss = bare_window(env)
                bare.append(shown)
                bare_rss.append(rss)
                app, seconds = launch_app(env, home)
                ours.append(seconds)
                rss_at_start.append(psutil.Process(app.pid).memory_info().rss)
                stop(app)

            save_settings(home, url, model_dir, contribute=True)
            app, _ = launch_app(env, home)
            try:
                wait_serving(url, app)
                process = psutil.Process(app.pid)
                time.sleep(5)  # let the first snapshot, gates and log lines settle
                torch_loaded = any("torch" in m.path for m in process.memory_maps())
                before, began = process.cpu_times(), time.monotonic()
                time.sleep(args.idle_seconds)
                after, wall = process.cpu_times(), time.monotonic() - began
                idle_cpu = (
                    100 * ((after.user - before.user) + (after.system - before.system)) / wall
                )
                rss_serving = process.memory_info().rss
            finally:
                stop(app)
        finally:
            tracker.terminate()
            tracker.wait(10)

    mb = 1024 * 1024
    ours_s, bare_s = min(ours), min(bare)
    median = statistics.median
    print(f"bare PySide6 window shown: {bare_s:.3f} s (median {median(bare):.3f} s)")
    print(
        f"meshnet-app window shown:  {ours_s:.3f} s (median {median(ours):.3f} s; target <= 1.5 s)"
    )
    print(f"bare PySide6 window RSS:   {min(bare_rss) / mb:.0f} MB")
    print(f"meshnet-app RSS at start:  {min(rss_at_start) / mb:.0f} MB")
    print(
        f"meshnet-app RSS serving:   {rss_serving / mb:.0f} MB "
        f"(target <= 150 MB; torch mapped: {torch_loaded})"
    )
    print(
        f"meshnet-app idle CPU while its node serves: {idle_cpu:.2f} % of one core "
        f"over {args.idle_seconds:.0f} s (target <= 1 %)"
    )
    print(f"ratio: {ours_s / bare_s:.2f}")


if __name__ == "__main__":
    main()
