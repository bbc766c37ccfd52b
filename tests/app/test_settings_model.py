"""AppSettings: each invalid field gets a sentence; stored values are read tolerantly."""

from __future__ import annotations

import logging
import subprocess
import sys
from dataclasses import replace
from typing import Any

import pytest

from app.settings_model import (
    AppSettings,
    settings_from_dict,
    settings_to_dict,
    tracker_url_problem,
    validate_settings,
)
from tests.tracker_service.server_process import REPO


def test_the_defaults_are_valid() -> None:
    assert validate_settings(AppSettings()) == {}


def test_a_fully_filled_in_settings_value_is_valid() -> None:
    s = AppSettings(
        tracker_url="https://tracker.example.org:8443/",
        model="/models/smollm2",
        layers=(0, 15),
        device="cuda:1",
        memory_cap_mb=4096,
        start_at_login=True,
        pause_above_gpu_temp_c=80,
        pause_programs=("eldenring.exe", "steam"),
        idle_minutes=10,
    )
    assert validate_settings(s) == {}


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("ftp://tracker.example.org", "must start with http:// or https://"),
        ("127.0.0.1:8765", "must start with http:// or https://"),
        ("http://", "needs a host name"),
        ("http://host:99999", "not a valid URL"),
    ],
)
def test_a_bad_tracker_url_says_what_to_type(url: str, words: str) -> None:
    problems = validate_settings(AppSettings(tracker_url=url))
    assert list(problems) == ["tracker_url"]
    assert words in problems["tracker_url"]
    assert tracker_url_problem(url) == problems["tracker_url"]


def test_no_tracker_address_means_the_joined_network() -> None:
    assert AppSettings().tracker_url == ""
    assert validate_settings(AppSettings(tracker_url="  ")) == {}
    # An address typed on purpose ("I run my own tracker") must still be one.
    assert "Enter the tracker's address" in (tracker_url_problem("") or "")


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("layers", (-1, 4), "must be 0 or more"),
        ("layers", (5, 5), "make the last layer larger than the first"),
        ("layers", (9, 3), "make the last layer larger than the first"),
        ("memory_cap_mb", 0, "choose at least 0.25 GB"),
        ("memory_cap_mb", -512, "choose at least 0.25 GB"),
        ("memory_cap_mb", 255, "0.24 GB is too little memory"),
        ("pause_above_gpu_temp_c", 39, "between 40 and 100 °C"),
        ("pause_above_gpu_temp_c", 101, "between 40 and 100 °C"),
        ("idle_minutes", 0, "between 1 and 240 idle minutes"),
        ("idle_minutes", 241, "between 1 and 240 idle minutes"),
        ("pause_programs", ("",), "Remove the empty program name"),
        ("pause_programs", ("C:\\Games\\eldenring.exe",), "not a path"),
        ("pause_programs", ("/usr/bin/steam",), "not a path"),
        ("device", "gpu0", "Unknown device"),
        ("model", "  ", "Choose a model"),
    ],
)
def test_each_invalid_field_gets_its_own_sentence(field: str, value: Any, words: str) -> None:
    problems = validate_settings(replace(AppSettings(), **{field: value}))
    assert list(problems) == [field]
    assert words in problems[field]
    assert problems[field].endswith(".")


def test_the_limits_themselves_are_valid() -> None:
    for s in (
        AppSettings(layers=(0, 1), memory_cap_mb=256, pause_above_gpu_temp_c=40, idle_minutes=1),
        AppSettings(pause_above_gpu_temp_c=100, idle_minutes=240, device="cpu"),
        AppSettings(device="mps"),
        AppSettings(device="cuda"),
    ):
        assert validate_settings(s) == {}


def test_several_bad_fields_are_all_reported() -> None:
    s = AppSettings(tracker_url="nope", layers=(3, 1), idle_minutes=0)
    assert set(validate_settings(s)) == {"tracker_url", "layers", "idle_minutes"}


def test_to_dict_and_back_is_the_same_settings() -> None:
    s = AppSettings(
        tracker_url="http://10.0.0.2:8765",
        layers=(4, 20),
        device="cuda:0",
        memory_cap_mb=6000,
        start_at_login=True,
        pause_when_gpu_busy=False,
        pause_above_gpu_temp_c=83,
        pause_programs=("eldenring.exe", "Cyberpunk2077.exe"),
        pause_on_battery=False,
        idle_minutes=15,
    )
    stored = settings_to_dict(s)
    assert stored["layers"] == [4, 20] and stored["pause_programs"] == [
        "eldenring.exe",
        "Cyberpunk2077.exe",
    ]
    assert settings_from_dict(stored) == s
    assert settings_from_dict(settings_to_dict(AppSettings())) == AppSettings()


def test_from_dict_reads_the_strings_qsettings_stores() -> None:
    stored = {
        "tracker_url": " http://10.0.0.2:8765 ",
        "model": "",
        "layers": ["0", "12"],
        "device": "",
        "memory_cap_mb": "2048",
        "start_at_login": "true",
        "pause_when_gpu_busy": "false",
        "pause_above_gpu_temp_c": "",
        "pause_programs": "eldenring.exe",  # a one-item list comes back as a string
        "pause_on_battery": "false",
        "idle_minutes": "5",
    }
    assert settings_from_dict(stored) == AppSettings(
        tracker_url="http://10.0.0.2:8765",
        layers=(0, 12),
        memory_cap_mb=2048,
        start_at_login=True,
        pause_when_gpu_busy=False,
        pause_programs=("eldenring.exe",),
        pause_on_battery=False,
        idle_minutes=5,
    )


def test_a_bad_stored_value_falls_back_to_its_default_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stored = {
        "tracker_url": "ftp://nope",
        "layers": "lots",
        "memory_cap_mb": 12,
        "start_at_login": "maybe",
        "pause_programs": [3, 4],
        "idle_minutes": 9999,
        "pause_above_gpu_temp_c": 85,  # the one good value is kept
        "unknown_key": "ignored",
    }
    with caplog.at_level(logging.WARNING, logger="app.settings_model"):
        s = settings_from_dict(stored)
    assert s == AppSettings(pause_above_gpu_temp_c=85)
    logged = caplog.text
    for name in (
        "tracker_url",
        "layers",
        "memory_cap_mb",
        "start_at_login",
        "pause_programs",
        "idle_minutes",
    ):
        assert f"ignoring stored {name}=" in logged
    assert "pause_above_gpu_temp_c" not in logged


def test_an_empty_store_gives_the_defaults() -> None:
    assert settings_from_dict({}) == AppSettings()


def test_the_app_logic_modules_import_neither_torch_nor_qt() -> None:
    modules = (
        "app.settings_model",
        "app.pause_rules",
        "app.probes",
        "app.probes.idle",
        "app.probes.gpu",
        "app.probes.programs",
        "app.probes.battery",
        "app.autostart",
        "app.tracker_api",
        "app.usage_history",
    )
    code = (
        f"import sys; import {', '.join(modules)}; "
        "from app.pause_rules import system_probes; system_probes(); "
        "bad = [m for m in ('torch', 'PySide6') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
