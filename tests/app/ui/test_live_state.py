"""State is live: a screen that is open when this computer joins or leaves a network
says so at once (it used to read the name only when the window was built)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.texts import text
from app.ui.network_watch import JoinedNetworkWatch
from core.identity.keystore import DEFAULT_PROFILE
from core.network.joined_network import JoinedNetwork, network_file, save_joined_network
from tests.app.ui.join_support import make_app

LAN_PARTY = JoinedNetwork(
    tracker_url="https://tracker.example:8765",
    key_fingerprint="0" * 32,
    join_token="token",
    name="Sam's LAN Party",
)


def test_the_open_status_window_and_settings_follow_join_and_leave(
    qtbot: Any, tmp_path: Path
) -> None:
    app = make_app(qtbot, tmp_path)  # no network joined
    app.show_initial(hidden=True)
    app.open_settings()
    settings = app._windows["settings"]
    qtbot.addWidget(settings)
    label = app.status_window.network_label
    assert label.text() == text("status.network.none")

    save_joined_network(DEFAULT_PROFILE, LAN_PARTY)  # what the join page does
    qtbot.waitUntil(lambda: "Sam's LAN Party" in label.text(), timeout=10_000)
    assert "Sam's LAN Party" in settings.network_label.text()  # type: ignore[attr-defined]

    network_file(DEFAULT_PROFILE).unlink()  # what leaving does
    qtbot.waitUntil(lambda: label.text() == text("status.network.none"), timeout=10_000)
    assert settings.network_label.text() == text("settings.network.none")  # type: ignore[attr-defined]


def test_a_rewritten_network_file_is_seen_again(qtbot: Any) -> None:
    watch = JoinedNetworkWatch()
    seen: list[Any] = []
    watch.changed.connect(seen.append)
    save_joined_network(DEFAULT_PROFILE, LAN_PARTY)
    qtbot.waitUntil(lambda: len(seen) == 1, timeout=10_000)
    renamed = JoinedNetwork(**{**LAN_PARTY.__dict__, "name": "Sam's Other Party"})
    save_joined_network(DEFAULT_PROFILE, renamed)  # replaced by a rename: watched again
    qtbot.waitUntil(lambda: len(seen) == 2, timeout=10_000)
    assert seen[-1].name == "Sam's Other Party"
