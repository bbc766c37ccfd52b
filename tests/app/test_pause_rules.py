"""decide() lists every active pause rule in order; PauseTracker keeps the node from flapping."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.pause_rules import (
    REASON_BATTERY,
    REASON_GPU_BUSY,
    REASON_GPU_HOT,
    REASON_NOT_IDLE,
    REASON_PROGRAM,
    REASON_RESUMING,
    PauseDecision,
    PauseTracker,
    ProbeReadings,
    contributing_sentence,
    decide,
    program_key,
    system_probes,
)
from app.probes import SystemProbes
from app.settings_model import AppSettings

QUIET = ProbeReadings(
    gpu_busy_by_others=False,
    gpu_temperature_c=55.0,
    running_programs=frozenset({"explorer.exe", "steam.exe"}),
    on_battery=False,
    idle_seconds=3600.0,
)
STRICT = AppSettings(
    pause_when_gpu_busy=True,
    pause_above_gpu_temp_c=80,
    pause_programs=("eldenring.exe",),
    pause_on_battery=True,
    idle_minutes=10,
)


def test_a_quiet_machine_contributes() -> None:
    decision = decide(STRICT, QUIET)
    assert decision == PauseDecision(pause=False, reason=None, sentence=contributing_sentence())


def test_every_active_rule_is_listed_most_important_first() -> None:
    busy = ProbeReadings(
        gpu_busy_by_others=True,
        gpu_temperature_c=87.4,
        running_programs=frozenset({"eldenring.exe"}),
        on_battery=True,
        idle_seconds=30.0,
    )
    decision = decide(STRICT, busy)
    assert decision.pause and decision.reason == REASON_PROGRAM
    assert decision.sentence == "Paused while eldenring.exe runs"
    assert decision.sentences == (
        "Paused while eldenring.exe runs",
        "Paused: the graphics card is busy with another program",
        "Paused: running on battery",
        "Paused: graphics card at 87 °C (limit 80 °C)",
        "Waiting until this computer has been idle for 10 minutes",
    )
    assert decision.reasons == (
        REASON_PROGRAM,
        REASON_GPU_BUSY,
        REASON_BATTERY,
        REASON_GPU_HOT,
        REASON_NOT_IDLE,
    )


@pytest.mark.parametrize(
    ("readings", "reason", "sentence"),
    [
        (replace(QUIET, gpu_busy_by_others=True), REASON_GPU_BUSY, "the graphics card is busy"),
        (replace(QUIET, on_battery=True), REASON_BATTERY, "running on battery"),
        (
            replace(QUIET, gpu_temperature_c=80.5),
            REASON_GPU_HOT,
            "graphics card at 80 °C (limit 80 °C)",
        ),
        (replace(QUIET, idle_seconds=599.0), REASON_NOT_IDLE, "idle for 10 minutes"),
    ],
)
def test_each_rule_alone_pauses(readings: ProbeReadings, reason: str, sentence: str) -> None:
    decision = decide(STRICT, readings)
    assert decision.pause and decision.reason == reason and sentence in decision.sentence
    assert decision.reasons == (reason,)


def test_unknown_readings_never_pause() -> None:
    unknown = ProbeReadings(
        gpu_busy_by_others=None,
        gpu_temperature_c=None,
        running_programs=frozenset(),
        on_battery=None,
        idle_seconds=None,
    )
    assert not decide(STRICT, unknown).pause


def test_a_rule_that_is_switched_off_does_not_pause() -> None:
    busy = replace(
        QUIET, gpu_busy_by_others=True, on_battery=True, gpu_temperature_c=99, idle_seconds=0
    )
    relaxed = AppSettings(
        pause_when_gpu_busy=False,
        pause_on_battery=False,
        pause_above_gpu_temp_c=None,
        idle_minutes=None,
    )
    assert not decide(relaxed, busy).pause


def test_the_temperature_limit_itself_and_the_idle_limit_itself_do_not_pause() -> None:
    at_limits = replace(QUIET, gpu_temperature_c=80.0, idle_seconds=600.0)
    assert not decide(STRICT, at_limits).pause


@pytest.mark.parametrize(
    ("listed", "running"),
    [
        ("eldenring.exe", "eldenring.exe"),
        ("EldenRing.EXE", "eldenring.exe"),
        ("eldenring", "eldenring.exe"),
        ("eldenring.exe", "eldenring"),  # listed with .exe, running on Linux under Proton's name
        ("Steam", "steam"),
    ],
)
def test_programs_match_in_any_case_with_or_without_exe(listed: str, running: str) -> None:
    settings = AppSettings(pause_programs=(listed,))
    decision = decide(settings, replace(QUIET, running_programs=frozenset({running})))
    assert decision.pause and decision.sentence == f"Paused while {listed} runs"


def test_a_program_whose_name_only_starts_the_same_does_not_pause() -> None:
    settings = AppSettings(pause_programs=("steam.exe",))
    readings = replace(QUIET, running_programs=frozenset({"steamwebhelper.exe"}))
    assert not decide(settings, readings).pause


def test_several_listed_programs_share_one_sentence() -> None:
    settings = AppSettings(pause_programs=("eldenring.exe", "obs64.exe", "ELDENRING"))
    readings = replace(QUIET, running_programs=frozenset({"eldenring.exe", "obs64.exe"}))
    assert decide(settings, readings).sentence == "Paused while eldenring.exe and obs64.exe run"


def test_one_idle_minute_is_singular() -> None:
    decision = decide(AppSettings(idle_minutes=1), replace(QUIET, idle_seconds=5.0))
    assert decision.sentence == "Waiting until this computer has been idle for 1 minute"


def test_program_key() -> None:
    assert program_key(" EldenRing.exe ") == program_key("eldenring") == "eldenring"


def _step(tracker: PauseTracker, pause: bool) -> PauseDecision:
    readings = replace(QUIET, on_battery=pause)
    return tracker.update(decide(STRICT, readings))


def test_the_tracker_pauses_at_once_and_resumes_after_one_more_clear_probe() -> None:
    tracker = PauseTracker()
    assert not _step(tracker, False).pause
    paused = _step(tracker, True)
    assert paused.pause and paused.reason == REASON_BATTERY and tracker.paused
    holding = _step(tracker, False)
    assert holding.pause and holding.reason == REASON_RESUMING
    assert holding.sentence.startswith("Resuming soon")
    resumed = _step(tracker, False)
    assert not resumed.pause and not tracker.paused


def test_a_flickering_reading_does_not_flap_the_node() -> None:
    tracker = PauseTracker()
    flicker = [True, False, True, False, True, False, True]
    effective = [_step(tracker, value).pause for value in flicker]
    assert effective == [True] * len(flicker)
    assert [_step(tracker, False).pause for _ in range(2)] == [True, False]


def test_the_tracker_with_more_clear_probes_waits_longer_and_resets() -> None:
    tracker = PauseTracker(clear_probes=3)
    _step(tracker, True)
    assert [_step(tracker, False).pause for _ in range(3)] == [True, True, False]
    _step(tracker, True)
    tracker.reset()
    assert not tracker.paused and not _step(tracker, False).pause
    with pytest.raises(ValueError):
        PauseTracker(clear_probes=0)


def test_system_probes_read_this_machine_without_raising() -> None:
    probes = system_probes()
    assert isinstance(probes, SystemProbes)
    readings = probes.read(None)
    assert isinstance(readings, ProbeReadings)
    # psutil sees at least this test's own process.
    assert any("python" in name for name in readings.running_programs)
    assert readings.idle_seconds is None or readings.idle_seconds >= 0
