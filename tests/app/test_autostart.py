"""Start at login on Windows (Run key), macOS (LaunchAgent) and Linux (XDG autostart)."""

from __future__ import annotations

import plistlib
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.autostart import (
    APP_NAME,
    APPROVED_KEY,
    BUNDLE_ID,
    RUN_KEY,
    autostart_enabled,
    desktop_exec,
    set_autostart,
)
from app.errors import AutostartError

COMMAND = [r"C:\Program Files\MeshNet\python.exe", "-m", "app.ui.main", "--minimized"]
POSIX_COMMAND = ["/Users/Ann Lee/MeshNet.app/Contents/MacOS/meshnet-app", "--minimized"]


class FakeKey:
    def __init__(self, registry: FakeWinreg, path: str) -> None:
        self.registry, self.path = registry, path

    def __enter__(self) -> FakeKey:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class FakeWinreg:
    """The winreg calls autostart makes, over a dict of HKCU keys."""

    HKEY_CURRENT_USER = "HKCU"
    KEY_SET_VALUE = 2
    KEY_QUERY_VALUE = 1
    REG_SZ = 1
    REG_BINARY = 3

    def __init__(self) -> None:
        self.keys: dict[str, dict[str, tuple[Any, int]]] = {}

    def CreateKeyEx(self, root: str, path: str, reserved: int, access: int) -> FakeKey:
        assert root == self.HKEY_CURRENT_USER and access == self.KEY_SET_VALUE
        self.keys.setdefault(path, {})
        return FakeKey(self, path)

    def OpenKey(self, root: str, path: str, reserved: int, access: int) -> FakeKey:
        assert root == self.HKEY_CURRENT_USER
        if path not in self.keys:
            raise FileNotFoundError(path)
        return FakeKey(self, path)

    def SetValueEx(self, key: FakeKey, name: str, reserved: int, kind: int, value: Any) -> None:
        self.keys[key.path][name] = (value, kind)

    def QueryValueEx(self, key: FakeKey, name: str) -> tuple[Any, int]:
        try:
            return self.keys[key.path][name]
        except KeyError:
            raise FileNotFoundError(name) from None

    def DeleteValue(self, key: FakeKey, name: str) -> None:
        if name not in self.keys[key.path]:
            raise FileNotFoundError(name)
        del self.keys[key.path][name]


# --- Windows ---------------------------------------------------------------------


def test_windows_writes_a_quoted_command_line_in_the_run_key() -> None:
    registry = FakeWinreg()
    assert not autostart_enabled(platform="win32", winreg=registry)
    set_autostart(True, COMMAND, platform="win32", winreg=registry)
    value, kind = registry.keys[RUN_KEY][APP_NAME]
    assert kind == FakeWinreg.REG_SZ
    assert value == r'"C:\Program Files\MeshNet\python.exe" -m app.ui.main --minimized'
    assert autostart_enabled(platform="win32", winreg=registry)


def test_windows_enable_twice_and_disable_twice_are_harmless() -> None:
    registry = FakeWinreg()
    set_autostart(True, COMMAND, platform="win32", winreg=registry)
    set_autostart(True, COMMAND, platform="win32", winreg=registry)
    assert list(registry.keys[RUN_KEY]) == [APP_NAME]
    set_autostart(False, COMMAND, platform="win32", winreg=registry)
    set_autostart(False, COMMAND, platform="win32", winreg=registry)
    assert registry.keys[RUN_KEY] == {}
    assert not autostart_enabled(platform="win32", winreg=registry)


def test_windows_entry_switched_off_in_task_manager_reads_off_until_turned_on_here() -> None:
    registry = FakeWinreg()
    set_autostart(True, COMMAND, platform="win32", winreg=registry)
    registry.keys[APPROVED_KEY] = {APP_NAME: (b"\x03" + bytes(11), FakeWinreg.REG_BINARY)}
    assert not autostart_enabled(platform="win32", winreg=registry)
    set_autostart(True, COMMAND, platform="win32", winreg=registry)
    assert APP_NAME not in registry.keys[APPROVED_KEY]
    assert autostart_enabled(platform="win32", winreg=registry)


def test_a_registry_failure_is_a_sentence() -> None:
    class Locked(FakeWinreg):
        def CreateKeyEx(self, *args: Any) -> FakeKey:
            raise PermissionError("Access is denied")

    with pytest.raises(AutostartError, match="Could not turn on start at login"):
        set_autostart(True, COMMAND, platform="win32", winreg=Locked())


# --- macOS -----------------------------------------------------------------------


def test_macos_writes_a_launch_agent_that_runs_at_login(tmp_path: Path) -> None:
    assert not autostart_enabled(platform="darwin", home=tmp_path)
    set_autostart(True, POSIX_COMMAND, platform="darwin", home=tmp_path)
    path = tmp_path / "Library" / "LaunchAgents" / f"{BUNDLE_ID}.plist"
    agent = plistlib.loads(path.read_bytes())
    assert agent["Label"] == BUNDLE_ID
    assert agent["ProgramArguments"] == POSIX_COMMAND  # an argv: no quoting needed
    assert agent["RunAtLoad"] is True
    assert autostart_enabled(platform="darwin", home=tmp_path)
    before = path.stat().st_mtime_ns
    set_autostart(True, POSIX_COMMAND, platform="darwin", home=tmp_path)
    assert path.stat().st_mtime_ns == before  # unchanged entry: not rewritten
    set_autostart(False, POSIX_COMMAND, platform="darwin", home=tmp_path)
    set_autostart(False, POSIX_COMMAND, platform="darwin", home=tmp_path)
    assert not path.exists() and not autostart_enabled(platform="darwin", home=tmp_path)


@pytest.mark.skipif(sys.platform != "darwin", reason="plutil exists only on macOS")
def test_macos_plutil_accepts_the_launch_agent(tmp_path: Path) -> None:
    set_autostart(True, POSIX_COMMAND, platform="darwin", home=tmp_path)
    path = tmp_path / "Library" / "LaunchAgents" / f"{BUNDLE_ID}.plist"
    subprocess.run(["plutil", "-lint", str(path)], check=True)


# --- Linux (XDG) -------------------------------------------------------------------


def read_desktop_entry(path: Path) -> dict[str, str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "[Desktop Entry]"
    return dict(line.split("=", 1) for line in lines[1:] if line and not line.startswith("#"))


def parse_exec(value: str) -> list[str]:
    """Undo the spec's two layers independently: string escapes, then argument quoting."""
    text = re.sub(r"\\(.)", lambda m: {"s": " ", "n": "\n", "t": "\t"}.get(m[1], m[1]), value)
    arguments: list[str] = []
    current: list[str] | None = None
    chars = iter(text)
    for char in chars:
        if char == '"':
            current = current if current is not None else []
            for inner in chars:
                if inner == '"':
                    break
                current.append(next(chars) if inner == "\\" else inner)
        elif char == " ":
            if current is not None:
                arguments.append("".join(current))
            current = None
        else:
            current = (current or []) + [char]
    if current is not None:
        arguments.append("".join(current))
    return [argument.replace("%%", "%") for argument in arguments]


def test_linux_writes_a_valid_desktop_entry_under_xdg_config_home(tmp_path: Path) -> None:
    config = tmp_path / "xdg-config"
    env = {"XDG_CONFIG_HOME": str(config)}
    set_autostart(True, POSIX_COMMAND, platform="linux", home=tmp_path, environ=env)
    path = config / "autostart" / "meshnet.desktop"
    entry = read_desktop_entry(path)
    assert entry["Type"] == "Application" and entry["Name"] == "MeshNet"
    assert entry["X-GNOME-Autostart-enabled"] == "true"
    assert entry["Terminal"] == "false"
    assert parse_exec(entry["Exec"]) == POSIX_COMMAND
    assert entry["Exec"].startswith('"/Users/Ann Lee/')
    assert autostart_enabled(platform="linux", home=tmp_path, environ=env)
    set_autostart(False, POSIX_COMMAND, platform="linux", home=tmp_path, environ=env)
    assert not path.exists()
    assert not autostart_enabled(platform="linux", home=tmp_path, environ=env)


def test_linux_defaults_to_dot_config_and_ignores_a_relative_xdg_config_home(
    tmp_path: Path,
) -> None:
    for env in ({}, {"XDG_CONFIG_HOME": "relative/config"}):
        set_autostart(True, ["meshnet-app"], platform="linux", home=tmp_path, environ=env)
        entry = read_desktop_entry(tmp_path / ".config" / "autostart" / "meshnet.desktop")
        assert entry["Exec"] == "meshnet-app"


def test_a_desktop_entry_switched_off_by_the_desktop_reads_off(tmp_path: Path) -> None:
    env: dict[str, str] = {}
    set_autostart(True, ["meshnet-app"], platform="linux", home=tmp_path, environ=env)
    path = tmp_path / ".config" / "autostart" / "meshnet.desktop"
    path.write_text(path.read_text().replace("enabled=true", "enabled=false"))
    assert not autostart_enabled(platform="linux", home=tmp_path, environ=env)
    set_autostart(True, ["meshnet-app"], platform="linux", home=tmp_path, environ=env)
    assert autostart_enabled(platform="linux", home=tmp_path, environ=env)


@pytest.mark.parametrize(
    "argument",
    [
        "/opt/MeshNet/meshnet-app",
        "/home/ann/My Games/meshnet",
        'say "hi"',
        "back\\slash",
        "cost$HOME",
        "100%",
        "it's",
        "",
    ],
)
def test_exec_quoting_round_trips_awkward_arguments(argument: str) -> None:
    command = ["/usr/bin/python3", argument, "--flag"]
    assert parse_exec(desktop_exec(command)) == command


def test_exec_quoting_follows_the_spec_for_backslashes_and_percent() -> None:
    assert desktop_exec(["/a b/c"]) == '"/a b/c"'
    assert desktop_exec(["back\\slash"]) == '"back\\\\\\\\slash"'  # four backslashes
    assert desktop_exec(["100%"]) == "100%%"


@pytest.mark.skipif(
    subprocess.run(["which", "desktop-file-validate"], capture_output=True).returncode != 0,
    reason="desktop-file-validate (desktop-file-utils) is not installed",
)
def test_desktop_file_validate_accepts_the_entry(tmp_path: Path) -> None:
    set_autostart(True, POSIX_COMMAND, platform="linux", home=tmp_path, environ={})
    path = tmp_path / ".config" / "autostart" / "meshnet.desktop"
    result = subprocess.run(["desktop-file-validate", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_file_that_cannot_be_written_is_a_sentence(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    env = {"XDG_CONFIG_HOME": str(blocker)}
    with pytest.raises(AutostartError, match="start at login"):
        set_autostart(True, ["meshnet-app"], platform="linux", home=tmp_path, environ=env)
    with pytest.raises(ValueError):
        set_autostart(True, [], platform="linux", home=tmp_path, environ=env)
