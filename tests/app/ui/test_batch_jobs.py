"""The setting "Run batch jobs when not serving": the executor child follows it."""

from __future__ import annotations

import sys
from dataclasses import replace

from pytestqt.qtbot import QtBot

from app.node_command import jobs_run_argv
from app.settings_model import AppSettings, settings_from_dict, settings_to_dict
from app.ui.batch_jobs import BatchJobsSupervisor

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]


def test_the_setting_round_trips_and_defaults_off() -> None:
    assert AppSettings().run_batch_jobs is False
    on = replace(AppSettings(), run_batch_jobs=True)
    assert settings_from_dict(settings_to_dict(on)) == on


def test_the_executor_command_names_the_tracker() -> None:
    argv = jobs_run_argv(AppSettings(tracker_url="http://t:1"), frozen=False)
    assert argv[-6:] == ["jobs", "run", "--tracker", "http://t:1", "--control", "stdin"]


def test_the_executor_runs_only_while_on_and_not_serving(qtbot: QtBot) -> None:
    supervisor = BatchJobsSupervisor(argv_factory=lambda _s: SLEEPER)
    try:
        supervisor.set_settings(AppSettings())
        assert not supervisor.running  # off by default
        supervisor.set_settings(replace(AppSettings(), run_batch_jobs=True))
        qtbot.waitUntil(lambda: supervisor.running, timeout=10_000)
        supervisor.set_serving(True)  # Contribute started: serving comes first
        qtbot.waitUntil(lambda: not supervisor.running, timeout=10_000)
        supervisor.set_serving(False)
        qtbot.waitUntil(lambda: supervisor.running, timeout=10_000)
        supervisor.set_settings(AppSettings())  # turned off
        qtbot.waitUntil(lambda: not supervisor.running, timeout=10_000)
    finally:
        supervisor.stop()
