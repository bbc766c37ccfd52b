"""Realistic settings for ``--screenshot`` (SettingsDialog.show_sample): no tracker is
asked, nothing is saved. Only ``show_sample`` imports this module, so a settings window
a user opens never loads the samples or their canned tracker."""

from __future__ import annotations

from typing import Any

import httpx

from app.settings_model import AppSettings
from app.tracker_api import TrackerCheck, check_tracker
from core.network.joined_network import JoinedNetwork

# which tab each sample shows: 0 this computer, 1 pause rules, 2 Advanced
SAMPLE_TABS = {"computer": 0, "pause": 1, "advanced": 2, "checked": 2, "problems": 0}

SAMPLE_SETTINGS = AppSettings(
    device="cuda:0",
    memory_cap_mb=8192,
    start_at_login=True,
    pause_above_gpu_temp_c=83,
    pause_programs=("eldenring.exe", "cyberpunk2077.exe"),
    idle_minutes=10,
    display_name="Ada",
    team="Riverside Makers",
)

SAMPLE_NETWORK = JoinedNetwork(
    tracker_url="https://tracker.riverside-makers.example",
    key_fingerprint="3f9a1c0e7b2d4a6f8e1b3c5d7f9a0b2c",
    join_token="",
    name="Riverside Makers",
    operator="Riverside Makerspace e.V.",
)

SAMPLE_TRACKER = "http://tracker.riverside-makers.example:8765"

SAMPLE_HARDWARE: dict[str, Any] = {
    "device": {"kind": "cuda", "name": "NVIDIA GeForce RTX 4070", "total_bytes": 12_878_086_144}
}


def sample_check(url: str) -> TrackerCheck:
    """The real check against a canned tracker state: 3 live nodes, 1 recipe."""
    state = {"generated_at": 0.0, "models": [], "recipes": [{}], "nodes": [], "nodes_total_live": 3}
    return check_tracker(
        url, transport=httpx.MockTransport(lambda _r: httpx.Response(200, json=state))
    )
