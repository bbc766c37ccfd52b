"""The installed app against the same app from source: launch to window shown,
memory, bundle size, and a real Contribute through the bundled node.

    python benchmarks/bundle_startup.py [--app /opt/meshnet/meshnet-app] [--rounds 5]

``--app`` is the bundled ``meshnet-app`` (``dist/meshnet/meshnet-app`` after
``installers/build.py``, or ``/opt/meshnet/meshnet-app`` after installing the
.deb). Each round launches it and the reference, ``python -m app.ui.main``
from this checkout, offscreen, interleaved, and reads the "window shown"
line the app logs. Then it turns Contribute on in the bundled app against a
real tracker on loopback and waits until the node child the app started from
its own folder serves: proof that the app finds its node in the bundle.

Prints the bundle's size on disk, each launch time with the reference's, and
last ``ratio: R`` = the bundle's launch time over the source tree's.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _load_app_startup():  # type: ignore[no-untyped-def]
    """The shared pieces (tracker, settings, log reading) of app_startup.py."""
    spec = importlib.util.spec_from_file_location(
        "app_startup", REPO / "benchmarks" / "app_startup.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _load_app_startup()


def bundle_environment(home: Path) -> dict[str, str]:
    """A user's environment for the bundle: no PYTHONPATH. Its node keeps its key
    in the in-memory test keyring (copied alone to a folder, so the source tree
    is not on its path), configured the way a user would configure keyring
    (``keyringrc.cfg``), since a headless box has no OS keyring."""
    env = bench.environment(home)
    for name in ("PYTHONPATH", "PYTHON_KEYRING_BACKEND", "VIRTUAL_ENV"):
        env.pop(name, None)
    backends = home / "keyring-backends"
    backends.mkdir(exist_ok=True)
    shutil.copy2(REPO / "tests" / "core" / "keyring_backend.py", backends / "dict_keyring.py")
    config = home / "config" / "python_keyring"
    config.mkdir(parents=True, exist_ok=True)
    (config / "keyringrc.cfg").write_text(
        f"[backend]\ndefault-keyring = dict_keyring.DictKeyring\nkeyring-path = {backends}\n",
        encoding="utf-8",
    )
    return env


def launch(
    command: list[str], env: dict[str, str], home: Path
) -> tuple[subprocess.Popen[bytes], float]:
    """Start the app; return it and its launch-to-shown seconds (from its log)."""
    log = home / "meshnet" / "logs" / "app.log"
    log.unlink(missing_ok=True)
    app = subprocess.Popen(
        command, env=env, cwd=home, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if app.poll() is not None:
            raise SystemExit(f"{command[0]} exited with {app.returncode}; see {log}")
        match = bench.SHOWN.search(log.read_text(encoding="utf-8")) if log.exists() else None
        if match:
            return app, float(match.group(1))
        time.sleep(0.05)
    app.kill()
    raise SystemExit(f"{command[0]} showed no window within 120 s; see {log}")


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def node_children(app: subprocess.Popen[bytes]) -> list[str]:
    return [child.exe() for child in psutil.Process(app.pid).children(recursive=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", type=Path, default=REPO / "dist" / "meshnet" / "meshnet-app")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    bundled = args.app.resolve()
    if not bundled.is_file():
        raise SystemExit(f"{bundled} not found: run `python installers/build.py` first")

    from core.models.default_model import ensure_default_model

    with tempfile.TemporaryDirectory(prefix="meshnet-bundle-bench-") as tmp:
        home = Path(tmp)
        source_env, bundle_env = bench.environment(home), bundle_environment(home)
        model_dir = ensure_default_model(home / "models")
        tracker, url = bench.start_tracker(home)
        try:
            bench.save_settings(home, url, model_dir, contribute=False)
            ours: list[float] = []
            source: list[float] = []
            rss: list[int] = []
            for _ in range(args.rounds):  # interleaved, so drift hits both alike
                app, seconds = launch([sys.executable, "-m", "app.ui.main"], source_env, home)
                source.append(seconds)
                bench.stop(app)
                app, seconds = launch([str(bundled)], bundle_env, home)
                ours.append(seconds)
                rss.append(psutil.Process(app.pid).memory_info().rss)
                bench.stop(app)

            bench.save_settings(home, url, model_dir, contribute=True)
            app, _ = launch([str(bundled)], bundle_env, home)
            try:
                began = time.monotonic()
                bench.wait_serving(url, app)
                serving_after = time.monotonic() - began
                children = node_children(app)
            finally:
                bench.stop(app)
        finally:
            tracker.terminate()
            tracker.wait(10)

    mib = 1024 * 1024
    median = statistics.median
    print(f"bundle: {bundled.parent} {folder_size(bundled.parent) / mib:.0f} MiB on disk")
    print(f"source meshnet-app window shown: {min(source):.3f} s (median {median(source):.3f} s)")
    print(f"bundled meshnet-app window shown: {min(ours):.3f} s (median {median(ours):.3f} s)")
    print(f"bundled meshnet-app RSS at start: {min(rss) / mib:.0f} MiB")
    print(f"bundled app's node child: {', '.join(children) or 'none'}")
    print(f"Contribute on -> serving on the tracker: {serving_after:.1f} s")
    print(f"ratio: {min(ours) / min(source):.2f}")


if __name__ == "__main__":
    main()
