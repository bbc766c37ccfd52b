"""Where the node keeps its files: models, reports, identities.

``MESHNET_HOME`` overrides the platform's user data folder, so tests, the demo
and several nodes on one machine each get a folder of their own.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def data_home() -> Path:
    override = os.environ.get("MESHNET_HOME")
    base = Path(override) if override else Path(platformdirs.user_data_dir("meshnet", "MeshNet"))
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
