"""Start the app at login, the way each OS expects it.

- Windows: a value named ``MeshNet`` under ``HKCU\\Software\\Microsoft\\Windows\\
  CurrentVersion\\Run`` holding the command line (``subprocess.list2cmdline`` quotes
  paths with spaces the way Windows parses them back).
- macOS: a LaunchAgent, ``~/Library/LaunchAgents/<BUNDLE_ID>.plist`` with
  ``RunAtLoad``; launchd reads it at the next login (nothing is started now, so the
  running app is not launched twice).
- Linux and other XDG desktops: ``$XDG_CONFIG_HOME/autostart/meshnet.desktop``, a
  desktop entry whose ``Exec`` is quoted per the Desktop Entry Specification.

`set_autostart` is idempotent: enabling twice writes the same entry, disabling an
absent entry is a no-op. The platform, home folder, environment and `winreg`
module are injected so every branch runs in tests on any OS.
"""

from __future__ import annotations

import contextlib
import logging
import os
import plistlib
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.errors import AutostartError
from app.texts import text

log = logging.getLogger(__name__)

APP_NAME = "MeshNet"
BUNDLE_ID = "org.meshnet.app"
RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"
# Where Task Manager's "Startup apps" records that the user switched an entry off.
APPROVED_KEY = r"Software\Microsoft\Windows\CurrentVersion\Explorer\StartupApproved\Run"
DESKTOP_FILE = "meshnet.desktop"


def set_autostart(
    enabled: bool,
    command: list[str],
    *,
    platform: str | None = None,
    home: Path | None = None,
    winreg: Any = None,
    environ: Mapping[str, str] | None = None,
) -> None:
    """Write (enabled) or remove (not enabled) the entry that starts `command` at login."""
    if enabled and not command:
        raise ValueError("the autostart command is empty")
    platform = platform or sys.platform
    try:
        if platform == "win32":
            _set_windows(enabled, command, _winreg(winreg))
        elif platform == "darwin":
            _set_file(enabled, _plist_path(home), lambda: _plist(command))
        else:
            _set_file(enabled, _desktop_path(home, environ), lambda: _desktop_entry(command))
    except OSError as exc:
        key = "settings.login.on-failed" if enabled else "settings.login.off-failed"
        raise AutostartError(text(key, error=exc)) from exc
    log.info("autostart: %s on %s", "enabled" if enabled else "disabled", platform)


def autostart_enabled(
    *,
    platform: str | None = None,
    home: Path | None = None,
    winreg: Any = None,
    environ: Mapping[str, str] | None = None,
) -> bool:
    """Whether an entry that starts the app at login exists (and is not switched off)."""
    platform = platform or sys.platform
    try:
        if platform == "win32":
            return _windows_enabled(_winreg(winreg))
        if platform == "darwin":
            return _plist_path(home).is_file()
        return _desktop_active(_desktop_path(home, environ))
    except OSError as exc:
        log.warning("autostart: could not read the login entry (%s)", exc)
        return False


# Windows -------------------------------------------------------------------------


def _winreg(module: Any) -> Any:
    if module is not None:
        return module
    import winreg  # only on Windows

    return winreg


def windows_command_line(command: list[str]) -> str:
    return subprocess.list2cmdline(command)


def _set_windows(enabled: bool, command: list[str], winreg: Any) -> None:
    with winreg.CreateKeyEx(winreg.HKEY_CURRENT_USER, RUN_KEY, 0, winreg.KEY_SET_VALUE) as key:
        if enabled:
            winreg.SetValueEx(key, APP_NAME, 0, winreg.REG_SZ, windows_command_line(command))
        else:
            with contextlib.suppress(FileNotFoundError):
                winreg.DeleteValue(key, APP_NAME)
    if enabled:
        # Turning it on here overrides an earlier "off" in Task Manager.
        with contextlib.suppress(FileNotFoundError):
            access = winreg.KEY_SET_VALUE
            with winreg.OpenKey(winreg.HKEY_CURRENT_USER, APPROVED_KEY, 0, access) as key:
                winreg.DeleteValue(key, APP_NAME)


def _read_value(winreg: Any, path: str) -> Any:
    try:
        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, path, 0, winreg.KEY_QUERY_VALUE) as key:
            value, _kind = winreg.QueryValueEx(key, APP_NAME)
    except FileNotFoundError:
        return None
    return value


def _windows_enabled(winreg: Any) -> bool:
    if _read_value(winreg, RUN_KEY) is None:
        return False
    approved = _read_value(winreg, APPROVED_KEY)
    # 02 00 … = on; an odd first byte (03 …) = switched off in Task Manager.
    return not (isinstance(approved, bytes | bytearray) and approved[:1] and approved[0] & 1)


# Files (macOS LaunchAgent, XDG autostart) -------------------------------------------


def _home(home: Path | None) -> Path:
    return home if home is not None else Path.home()


def _plist_path(home: Path | None) -> Path:
    return _home(home) / "Library" / "LaunchAgents" / f"{BUNDLE_ID}.plist"


def _desktop_path(home: Path | None, environ: Mapping[str, str] | None) -> Path:
    env = os.environ if environ is None else environ
    config = env.get("XDG_CONFIG_HOME", "")
    # The spec ignores a relative XDG_CONFIG_HOME.
    base = Path(config) if config and os.path.isabs(config) else _home(home) / ".config"
    return base / "autostart" / DESKTOP_FILE


def _set_file(enabled: bool, path: Path, render: Any) -> None:
    if not enabled:
        path.unlink(missing_ok=True)
        return
    content: bytes = render()
    if path.is_file() and path.read_bytes() == content:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(content)
    os.replace(temporary, path)


def _plist(command: list[str]) -> bytes:
    agent = {
        "Label": BUNDLE_ID,
        "ProgramArguments": list(command),
        "RunAtLoad": True,
        "KeepAlive": False,
        "ProcessType": "Interactive",
        "LimitLoadToSessionType": "Aqua",
    }
    return plistlib.dumps(agent, fmt=plistlib.FMT_XML)


_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def desktop_exec_argument(argument: str) -> str:
    """One Exec argument, quoted per the Desktop Entry Specification.

    Quoting comes first (", `, $ and \\ escaped inside double quotes), then the
    string-value escape doubles every backslash, and % is written %% so it is not
    read as a field code.
    """
    if argument and not _RESERVED & set(argument):
        quoted = argument
    else:
        inner = "".join("\\" + c if c in '"`$\\' else c for c in argument)
        quoted = f'"{inner}"'
    return quoted.replace("\\", "\\\\").replace("%", "%%")


def desktop_exec(command: list[str]) -> str:
    return " ".join(desktop_exec_argument(argument) for argument in command)


def _desktop_entry(command: list[str]) -> bytes:
    lines = [
        "[Desktop Entry]",
        "Type=Application",
        "Version=1.4",  # the newest that Debian 12's desktop-file-validate knows
        f"Name={APP_NAME}",
        "Comment=Lend this PC's GPU to the MeshNet network",
        f"Exec={desktop_exec(command)}",
        "Terminal=false",
        "Categories=Network;",
        "X-GNOME-Autostart-enabled=true",
    ]
    return ("\n".join(lines) + "\n").encode("utf-8")


def _desktop_active(path: Path) -> bool:
    if not path.is_file():
        return False
    values: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip()
    return (
        values.get("Hidden", "false") != "true"
        and values.get("X-GNOME-Autostart-enabled", "true") != "false"
    )
