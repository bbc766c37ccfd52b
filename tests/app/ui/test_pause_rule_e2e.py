"""A game starts: the app's pause rule fires on a fake probe, its real node child
pauses and gives the memory back, and the window says so in plain words.

The app's own supervisor (``MeshNetApp``: controller, pause monitor, status
window) runs a real node child of the real default model against a real
tracker; only the probe is fake (it reports a full-screen game). Then Stop: the
window says at once that the answers under way go to other computers, in plain
words (docs/churn.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psutil
import pytest

from app.pause_rules import ProbeReadings
from app.texts import forbidden_words_in, number, text
from tests.app.ui.test_app_e2e import live_node_ids
from tests.tracker_service.server_process import TrackerProcess

pytestmark = pytest.mark.slow

PROBE_PERIOD_MS = 200
RELEASE_LIMIT_S = 2.0  # the target, measured inside the node


class GameProbe:
    """Pause-rule probes that report a full-screen game once a test starts one."""

    def __init__(self) -> None:
        self.game_running = False

    def read(self, node_pid: int | None) -> ProbeReadings:
        return ProbeReadings(full_screen=self.game_running)


def test_a_game_starting_pauses_the_node_frees_its_memory_and_the_window_says_paused(
    qtbot: Any, tmp_path: Path, tracker: TrackerProcess, default_model_dir: Path, child_env: None
) -> None:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app.settings_model import AppSettings
    from app.ui.main import MeshNetApp
    from app.ui.settings_store import SettingsStore
    from app.usage_history import UsageHistory

    store = SettingsStore(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    settings = AppSettings(tracker_url=tracker.url, model=str(default_model_dir), layers=(0, 30))
    assert settings.pause_when_gpu_busy  # the rule a full-screen game fires, on by default
    store.save(settings)
    qapp = QApplication.instance()
    assert isinstance(qapp, QApplication)
    probe = GameProbe()
    app = MeshNetApp(
        qapp,
        store=store,
        probes=probe,
        usage=UsageHistory(tmp_path / "usage.json"),
        tray_available=False,
        state=QSettings(str(tmp_path / "state.ini"), QSettings.Format.IniFormat),
        probe_period_ms=PROBE_PERIOD_MS,
    )
    window = app.status_window
    try:
        app.show_initial()
        app.set_contributing(True)
        qtbot.waitUntil(lambda: app.controller.status.state == "serving", timeout=240_000)
        status = app.controller.status
        node_id = str((status.registration or {}).get("node_id", ""))
        assert node_id in live_node_ids(tracker.url)
        pid = app.controller.pid
        assert pid is not None
        weight_bytes = int((status.report or {})["memory"]["weight_bytes"])
        serving_rss = psutil.Process(pid).memory_info().rss

        probe.game_running = True  # the game goes full screen
        qtbot.waitUntil(lambda: app.controller.status.state == "paused", timeout=60_000)

        # The node measured its memory given back within the target, and gave it back.
        released = app.controller.status.memory_released_s
        assert released is not None and 0.0 <= released <= RELEASE_LIMIT_S, released
        paused_rss = psutil.Process(pid).memory_info().rss
        # the system got the shard's bytes back, not only the allocator (core/node/proving.py)
        given_back = serving_rss - paused_rss
        assert given_back >= weight_bytes * 3 // 4, (serving_rss, paused_rss, weight_bytes)
        assert app.monitor.paused_by_rule
        assert node_id not in live_node_ids(tracker.url)  # it told the tracker it left

        # The window says paused, why, and how soon the memory was free, in plain words.
        window.refresh()
        assert window.headline_label.text() == text("headline.paused")
        said = window.sentence_label.text()
        assert said.startswith(text("pause.gpu-busy")), said
        seconds = number(max(released, 0.01), 2)
        assert text("sentence.paused.released", seconds=seconds) in said, said
        assert forbidden_words_in(said) == [], said

        # Stop while paused: the window says at once what happens to the answers.
        app.set_contributing(False)
        window.refresh()
        assert window.headline_label.text() == text("headline.draining")
        assert window.sentence_label.text() == text("sentence.draining")
        qtbot.waitUntil(lambda: not app.controller.running, timeout=60_000)
    finally:
        app.controller.kill()
        window.close()
