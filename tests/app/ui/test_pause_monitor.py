"""Pause rules wired to a real controller and node child, with injected probes."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from app.pause_rules import ProbeReadings
from app.settings_model import AppSettings
from app.ui.pause_monitor import PauseMonitor
from tests.app.ui.test_controller import _kill_children, fake_controller  # noqa: F401

PERIOD_MS = 200


class Store:
    def __init__(self, settings: AppSettings) -> None:
        self.settings = settings

    def load(self) -> AppSettings:
        return self.settings


class Programs:
    """Probes whose running programs a test sets; records the thread each read ran on."""

    def __init__(self) -> None:
        self.running: frozenset[str] = frozenset()
        self.threads: set[str] = set()
        self.pids: list[int | None] = []

    def read(self, node_pid: int | None) -> ProbeReadings:
        self.threads.add(threading.current_thread().name)
        self.pids.append(node_pid)
        return ProbeReadings(running_programs=self.running)


@pytest.fixture
def serving(qtbot: Any, tmp_path: Path) -> Any:
    controller = fake_controller(qtbot, tmp_path)
    probes = Programs()
    store = Store(AppSettings(pause_programs=("EldenRing.exe",)))
    monitor = PauseMonitor(controller, store, probes, period_ms=PERIOD_MS, clear_probes=2)
    controller.start()
    qtbot.waitUntil(lambda: controller.status.state == "serving", timeout=15000)
    monitor.start()
    yield controller, monitor, probes
    monitor.stop()
    if controller.running:
        with qtbot.waitSignal(controller.running_changed, timeout=15000):
            controller.stop()


def test_listed_program_pauses_within_a_probe_period_and_its_end_resumes(
    qtbot: Any, serving: Any
) -> None:
    controller, monitor, probes = serving
    qtbot.waitUntil(lambda: len(probes.pids) >= 1, timeout=5000)
    assert controller.status.state == "serving"
    probes.running = frozenset({"eldenring.exe"})
    qtbot.waitUntil(lambda: controller.status.state == "paused", timeout=PERIOD_MS * 10)
    assert "eldenring" in controller.status.message.lower()
    assert monitor.paused_by_rule
    probes.running = frozenset()
    qtbot.waitUntil(lambda: controller.status.state == "serving", timeout=PERIOD_MS * 20)
    assert not monitor.paused_by_rule
    assert "MainThread" not in probes.threads  # probes never block the GUI thread
    assert any(pid for pid in probes.pids)  # the node's pid is passed to the probes


def test_manual_pause_holds_against_the_rules_and_resumes_when_it_ends(
    qtbot: Any, serving: Any
) -> None:
    controller, monitor, probes = serving
    changes: list[bool] = []
    monitor.manual_pause_changed.connect(changes.append)
    monitor.pause_for(3600)
    qtbot.waitUntil(lambda: controller.status.state == "paused", timeout=10000)
    assert controller.status.message.startswith("Paused at your request until")
    count = len(probes.pids)
    qtbot.waitUntil(lambda: len(probes.pids) >= count + 3, timeout=10000)
    assert controller.status.state == "paused"  # clear rules do not end a manual pause
    monitor.resume_now()
    qtbot.waitUntil(lambda: controller.status.state == "serving", timeout=10000)
    assert changes == [True, False]


def test_manual_pause_timer_resumes_by_itself(qtbot: Any, serving: Any) -> None:
    controller, monitor, _probes = serving
    monitor.pause_for(0.5)
    qtbot.waitUntil(lambda: controller.status.state == "paused", timeout=10000)
    qtbot.waitUntil(lambda: controller.status.state == "serving", timeout=10000)
    assert monitor.manual_pause_until is None


def test_contribute_off_ends_the_pauses(qtbot: Any, serving: Any) -> None:
    controller, monitor, probes = serving
    probes.running = frozenset({"EldenRing"})
    qtbot.waitUntil(lambda: controller.status.state == "paused", timeout=10000)
    with qtbot.waitSignal(controller.running_changed, timeout=15000):
        controller.stop()
    assert not monitor.paused_by_rule
    count = len(probes.pids)
    qtbot.wait(PERIOD_MS * 3)
    assert len(probes.pids) == count  # no probing while Contribute is off
