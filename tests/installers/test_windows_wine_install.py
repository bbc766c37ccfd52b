"""The Windows installer, installed and run under Wine in a fresh prefix.

Opt-in (``MESHNET_TEST_INSTALLER_WINDOWS=1``; ``make test-installer-windows``) and
slow. The setup.exe is ``$MESHNET_WINDOWS_SETUP`` when given, else built here by
``installers/windows_cross.py`` with the fast zlib compressor (a cold build
freezes under Wine for ~25 minutes on 2 cores; the cache keeps the rest).

In a Wine prefix made for this run (never the build's): ``setup.exe /S
/AUTOSTART=1``; the program folder, the ``meshnet://`` handler and the Run
entry read back with Wine's ``reg``; the installed ``meshnet-node.exe
--version``; ``doctor --json`` (a real forward of the bundled model on the
CPU); ``run`` against a real tracker on loopback with a Linux node holding the
other half, until the recipe certifies and a chat answers; ``meshnet-app.exe
--screenshot`` on Qt's ``windows`` platform under Xvfb; ``uninstall.exe /S``
removes the program and keeps ``%LOCALAPPDATA%\\MeshNet``. Each step's time is
printed (and written to ``$MESHNET_WINDOWS_TEST_TIMES`` when set).

Wine 8 lacks a few things Windows 10/11 have; they are set up in this test's
prefix only, never in the installer (installers/README.md): Microsoft's
``ucrtbase.dll`` and the mingw-built ``bcryptprimitives``/``icuuc`` shims, and
Qt's FreeType font engine (Wine's DirectWrite draws no glyphs for Qt).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path, PureWindowsPath

import httpx
import pytest

from installers.windows_cross import (
    WINE_ENV,
    cache_root,
    find_wine,
    install_ucrt_shim,
    install_wine_shims,
)

REPO = Path(__file__).resolve().parents[2]
OPT_IN = "MESHNET_TEST_INSTALLER_WINDOWS"
WINE = find_wine()
SHIM_DLLS = ("ucrtbase.dll", "bcryptprimitives.dll", "icuuc.dll")
TIMES: dict[str, float] = {}

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(3600),  # a cold build freezes under Wine for ~25 minutes
    pytest.mark.skipif(
        os.environ.get(OPT_IN) != "1",
        reason=f"installs and runs the Windows build under Wine (minutes): set {OPT_IN}=1",
    ),
    pytest.mark.skipif(
        WINE is None or shutil.which("xvfb-run") is None,
        reason="needs wine64 and xvfb-run (apt-get install wine wine64 xvfb)",
    ),
]


def record(step: str, started: float) -> None:
    TIMES[step] = round(time.monotonic() - started, 1)
    print(f"windows installer step {step}: {TIMES[step]} s", file=sys.__stderr__, flush=True)
    report = os.environ.get("MESHNET_WINDOWS_TEST_TIMES")
    if report:
        Path(report).write_text(json.dumps(TIMES, indent=2) + "\n", encoding="utf-8")


def windows_path(path: Path) -> str:
    return str(PureWindowsPath("Z:\\", *path.resolve().parts[1:]))


class Prefix:
    """A fresh Wine prefix and the Windows programs run in it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("MESHNET_", "QT_", "PYTHON", "VIRTUAL_ENV"))
        }
        self.env.update(WINE_ENV, WINEPREFIX=str(root))

    def run(self, *argv: str, timeout: float = 600, xvfb: bool = False) -> str:
        """Run and wait for every process of the prefix; stdout and stderr are pipes
        (a Windows program whose stdout is a file fails at start under Wine)."""
        command = [str(WINE), *argv]
        if xvfb:
            command = ["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", *command]
        done = subprocess.run(
            command, env=self.env, stdin=subprocess.DEVNULL, capture_output=True,
            text=True, errors="replace", timeout=timeout,
        )  # fmt: skip
        self.wait()
        assert done.returncode == 0, f"{argv}: {done.returncode}\n{done.stderr[-3000:]}"
        return done.stdout + done.stderr

    def wait(self) -> None:
        server = Path(str(WINE)).with_name("wineserver")
        subprocess.run([str(server) if server.is_file() else "wineserver", "-w"], env=self.env)

    def kill(self) -> None:
        server = Path(str(WINE)).with_name("wineserver")
        subprocess.run([str(server) if server.is_file() else "wineserver", "-k"], env=self.env)

    def reg(self, key: str) -> str:
        return self.run("reg", "query", key, timeout=120)

    def local_app_data(self) -> Path:
        [users] = [p for p in (self.root / "drive_c" / "users").iterdir() if p.name != "Public"]
        return users / "AppData" / "Local"

    @property
    def program(self) -> Path:
        return self.local_app_data() / "Programs" / "MeshNet"

    def program_exe(self, name: str) -> str:
        return "C:\\" + str(
            PureWindowsPath(*self.program.relative_to(self.root / "drive_c").parts, name)
        )


@pytest.fixture(scope="module")
def setup_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("MESHNET_WINDOWS_SETUP")
    if given:
        return Path(given)
    dist = tmp_path_factory.mktemp("windows-dist")
    started = time.monotonic()
    subprocess.run(
        [sys.executable, str(REPO / "installers" / "windows_cross.py"), "--dist", str(dist),
         "--compressor", os.environ.get("WINDOWS_COMPRESSOR", "zlib")],
        cwd=REPO, check=True, timeout=3600,
    )  # fmt: skip
    record("build setup.exe", started)
    [setup] = dist.glob("MeshNet-*-setup.exe")
    return setup


@pytest.fixture(scope="module")
def prefix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prefix]:
    started = time.monotonic()
    wine = Prefix(tmp_path_factory.mktemp("wineprefix"))
    wine.run("wineboot", "-i", timeout=300)
    # test-only: what Wine 8 lacks and Windows 10/11 have (never in the installer)
    install_ucrt_shim(cache_root(), wine.root)
    install_wine_shims(wine.root)
    # Wine's DirectWrite draws no glyphs for Qt: its FreeType engine, windows platform still
    wine.run("reg", "add", "HKCU\\Environment", "/v", "QT_QPA_PLATFORM",
             "/d", "windows:fontengine=freetype", "/f", timeout=120)  # fmt: skip
    record("fresh Wine prefix", started)
    try:
        yield wine
    finally:
        wine.kill()


@pytest.fixture(scope="module")
def installed(setup_exe: Path, prefix: Prefix) -> Prefix:
    started = time.monotonic()
    prefix.run(str(setup_exe), "/S", "/AUTOSTART=1", timeout=900)
    record("silent install", started)
    return prefix


def test_silent_install_writes_the_program_the_link_handler_and_autostart(
    installed: Prefix,
) -> None:
    program = installed.program
    for name in ("meshnet-app.exe", "meshnet-node.exe", "uninstall.exe"):
        assert (program / name).is_file(), name
    carried = {p.name.lower() for p in program.rglob("*.dll")}
    assert not carried & set(SHIM_DLLS), "a test-only Wine shim is inside the installer"
    assert {"msvcp140.dll", "msvcp140_atomic_wait.dll"} <= carried
    handler = installed.reg("HKCU\\Software\\Classes\\meshnet\\shell\\open\\command")
    assert 'meshnet-app.exe" --join "%1"' in handler
    assert "URL Protocol" in installed.reg("HKCU\\Software\\Classes\\meshnet")
    run = installed.reg("HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Run")
    assert 'MeshNet\\meshnet-app.exe" --hidden' in run


def test_installed_node_answers_version(installed: Prefix) -> None:
    from core import __version__

    started = time.monotonic()
    out = installed.run(installed.program_exe("meshnet-node.exe"), "--version", timeout=300)
    record("meshnet-node.exe --version", started)
    assert f"meshnet-node {__version__}" in out


def test_installed_node_passes_the_doctor_on_the_cpu(installed: Prefix) -> None:
    started = time.monotonic()
    done = subprocess.run(
        [str(WINE), installed.program_exe("meshnet-node.exe"), "doctor", "--json",
         "--device", "cpu"],
        env=installed.env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        errors="replace", timeout=900,
    )  # fmt: skip
    installed.wait()
    record("meshnet-node.exe doctor --json", started)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["passed"] is True and report["status"] == "passed"
    assert report["model"]["model_id"] == "smollm2-135m-instruct"
    assert report["backend"]["device"] == "cpu" and report["tokens_per_second"] > 0
    print(f"doctor under Wine: {report['tokens_per_second']:.1f} tokens/s", file=sys.__stderr__)


def test_installed_node_serves_with_a_linux_node_until_a_chat_answers(
    installed: Prefix, default_model_dir: Path, tmp_path: Path
) -> None:
    """The Windows node holds layers 0-15 alone, so the certifying route and the
    chat both pass through it; a Linux node process holds 15-30."""
    from app.demo.processes import Child, node_arguments, start_node, start_tracker

    events: list[tuple[str, object]] = []
    tracker, url = start_tracker(
        tmp_path, lambda n, line: events.append((n, line)), heartbeat_s=1.0
    )
    children: list[Child] = [tracker]
    started = time.monotonic()
    try:
        children.append(
            start_node(2, tmp_path, url, default_model_dir, (15, 30), lambda name, line: None)
        )
        arguments = node_arguments(1, tmp_path, url, default_model_dir, (0, 15))
        arguments = [windows_path(Path(a)) if a.startswith("/") else a for a in arguments]
        argv = [str(WINE), installed.program_exe("meshnet-node.exe"), *arguments]
        windows = Child(
            "windows node", argv, installed.env, tmp_path / "windows-node.log",
            lambda n, line: events.append((n, line)),
        )  # fmt: skip
        children.append(windows)
        state: dict = {}
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            for child in children:
                assert child.exited is None, f"{child.name} exited with {child.exited}"
            state = httpx.get(url + "/api/v1/state", timeout=10, trust_env=False).json()
            if any(r["status"] == "certified" for r in state.get("recipes", [])):
                break
            time.sleep(1.0)
        else:
            raise AssertionError(f"no recipe certified; windows node log: {_tail(windows)}")
        record("meshnet-node.exe run: recipe certified", started)
        model = next(r for r in state["recipes"] if r["status"] == "certified")["artifact_id"]
        chat_started = time.monotonic()
        reply = httpx.post(
            url + "/v1/chat/completions",
            json={"model": model, "messages": [{"role": "user", "content": "Name three colours."}],
                  "max_tokens": 12, "temperature": 0},
            timeout=300, trust_env=False,
        )  # fmt: skip
        record("meshnet-node.exe run: chat answered", chat_started)
        assert reply.status_code == 200, reply.text
        assert reply.json()["choices"][0]["message"]["content"].strip()
        served = [
            line["data"]["tokens_served"]
            for name, line in events
            if name == "windows node" and isinstance(line, dict) and line.get("kind") == "stats"
        ]
        assert served and max(served) > 0
    finally:
        for child in reversed(children):
            child.stop()
        installed.kill()


def _tail(child: object) -> str:
    log = getattr(child, "_log", None)
    path = Path(log.name) if log is not None else None
    return path.read_text(errors="replace")[-3000:] if path and path.is_file() else ""


def test_installed_app_renders_every_screen_on_the_windows_platform(
    installed: Prefix, tmp_path: Path
) -> None:
    shots = tmp_path / "shots"
    started = time.monotonic()
    installed.run(installed.program_exe("meshnet-app.exe"), "--screenshot", windows_path(shots),
                  timeout=600, xvfb=True)  # fmt: skip
    record("meshnet-app.exe --screenshot", started)
    names = {path.stem for path in shots.glob("*.png")}
    assert {"status-serving", "tray-icons", "wizard-welcome", "settings-computer"} <= names
    assert all(path.stat().st_size > 1000 for path in shots.glob("*.png"))
    keep = os.environ.get("MESHNET_WINDOWS_SCREENSHOTS")
    if keep:
        shutil.copytree(shots, keep, dirs_exist_ok=True)


def test_silent_uninstall_removes_the_program_and_keeps_the_data(installed: Prefix) -> None:
    data = installed.local_app_data() / "MeshNet"
    assert data.is_dir()  # the doctor's report and the model live here
    started = time.monotonic()
    installed.run(installed.program_exe("uninstall.exe"), "/S", timeout=600)
    record("silent uninstall", started)
    assert not (installed.program / "meshnet-app.exe").exists()
    assert not (installed.program / "meshnet-node.exe").exists()
    assert data.is_dir() and any(data.iterdir())
    gone = subprocess.run(
        [str(WINE), "reg", "query", "HKCU\\Software\\Classes\\meshnet"],
        env=installed.env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
    )  # fmt: skip
    assert gone.returncode != 0
    run = installed.reg("HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Run")
    assert "meshnet-app.exe" not in run
