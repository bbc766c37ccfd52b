"""Where the node keeps its files: models, reports, identities.

``MESHNET_HOME`` overrides the platform's user data folder, so tests, the demo
and several nodes on one machine each get a folder of their own. On Windows the
folder is ``%LOCALAPPDATA%\\MeshNet`` (local, not roaming: models are gigabytes
and belong to this PC); elsewhere it is platformdirs' user data folder.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path, PureWindowsPath

import platformdirs

WINDOWS_FOLDER = "MeshNet"


def windows_data_home(environ: Mapping[str, str]) -> PureWindowsPath:
    """``%LOCALAPPDATA%\\MeshNet``; ``%USERPROFILE%\\AppData\\Local\\MeshNet`` if it is unset."""
    local = environ.get("LOCALAPPDATA", "")
    if not local:
        local = str(PureWindowsPath(environ.get("USERPROFILE", "C:\\"), "AppData", "Local"))
    return PureWindowsPath(local, WINDOWS_FOLDER)


def platform_data_home(
    platform: str | None = None, environ: Mapping[str, str] | None = None
) -> str:
    env = os.environ if environ is None else environ
    override = env.get("MESHNET_HOME")
    if override:
        return override
    if (platform or sys.platform) == "win32":
        return str(windows_data_home(env))
    return platformdirs.user_data_dir("meshnet", "MeshNet")


def data_home() -> Path:
    base = Path(platform_data_home())
    base.mkdir(parents=True, exist_ok=True)
    return base


def models_dir() -> Path:
    path = data_home() / "models"
    path.mkdir(parents=True, exist_ok=True)
    return path


def reports_dir() -> Path:
    path = data_home() / "reports"
    path.mkdir(parents=True, exist_ok=True)
    return path
