"""When a contributor's PC should stop lending its GPU, as a pure function of readings.

The probes (``app.probes``) read the machine; `decide` turns one reading and the
settings into a decision with a sentence for the tray; `PauseTracker` adds the
hysteresis that keeps a flickering reading from pausing and resuming the node on
every probe (a pause frees the shard's memory and a resume re-runs the doctor, so
each flap costs the network a node for a minute).

A reading the probes could not take (None) never pauses: a missing NVML or an
unknown idle time must not keep a node off the network for good.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# ProbeReadings and Probes are also read from here (the tests, the pause monitor).
from app.probe_readings import ProbeReadings, Probes
from app.settings_model import AppSettings
from app.texts import number, text

# Stable codes, most important first: the order the sentences are listed in.
REASON_PROGRAM = "program-running"
REASON_GPU_BUSY = "gpu-busy"
REASON_BATTERY = "on-battery"
REASON_GPU_HOT = "gpu-hot"
REASON_NOT_IDLE = "not-idle"
REASON_RESUMING = "resuming"


def contributing_sentence() -> str:
    """What the status window says while no rule pauses (in the chosen language)."""
    return text("pause.none")


@dataclass(frozen=True)
class PauseDecision:
    pause: bool
    reason: str | None  # the most important active rule's code; None when contributing
    sentence: str  # the most important active rule's sentence
    sentences: tuple[str, ...] = field(default=())  # every active rule, most important first
    reasons: tuple[str, ...] = field(default=())


def program_key(name: str) -> str:
    """Compare program names the way a user means them: any case, with or without .exe."""
    key = name.strip().lower()
    return key[: -len(".exe")] if key.endswith(".exe") else key


def _running_listed(listed: tuple[str, ...], running: frozenset[str]) -> list[str]:
    running_keys = {program_key(name) for name in running}
    seen: set[str] = set()
    found: list[str] = []
    for name in listed:
        key = program_key(name)
        if key and key in running_keys and key not in seen:
            seen.add(key)
            found.append(name.strip())
    return found


def _programs_sentence(names: list[str]) -> str:
    if len(names) == 1:
        return text("pause.program", name=names[0])
    return text("pause.programs", names=", ".join(names[:-1]), last=names[-1])


def decide(settings: AppSettings, readings: ProbeReadings) -> PauseDecision:
    """Every active rule, most important first; unknown readings never pause."""
    active: list[tuple[str, str]] = []
    programs = _running_listed(settings.pause_programs, readings.running_programs)
    if programs:
        active.append((REASON_PROGRAM, _programs_sentence(programs)))
    # A full-screen game or presentation counts as the graphics card busy with
    # another program: the user is playing or showing something (Windows tells).
    gpu_busy = readings.gpu_busy_by_others is True or readings.full_screen is True
    if settings.pause_when_gpu_busy and gpu_busy:
        active.append((REASON_GPU_BUSY, text("pause.gpu-busy")))
    if settings.pause_on_battery and readings.on_battery is True:
        active.append((REASON_BATTERY, text("pause.battery")))
    limit = settings.pause_above_gpu_temp_c
    temp = readings.gpu_temperature_c
    if limit is not None and temp is not None and temp > limit:
        active.append(
            (REASON_GPU_HOT, text("pause.gpu-hot", temp=number(round(temp)), limit=number(limit)))
        )
    idle_minutes = settings.idle_minutes
    idle = readings.idle_seconds
    if idle_minutes is not None and idle is not None and idle < idle_minutes * 60:
        waiting = (
            text("pause.idle.one")
            if idle_minutes == 1
            else text("pause.idle", minutes=number(idle_minutes))
        )
        active.append((REASON_NOT_IDLE, waiting))
    if not active:
        return PauseDecision(pause=False, reason=None, sentence=contributing_sentence())
    return PauseDecision(
        pause=True,
        reason=active[0][0],
        sentence=active[0][1],
        sentences=tuple(sentence for _, sentence in active),
        reasons=tuple(reason for reason, _ in active),
    )


class PauseTracker:
    """Pause at once; resume only after the rules have been clear for `clear_probes` probes.

    Pausing late lets a game stutter, so a pause takes effect on the first probe
    that asks for it; resuming early lets a reading that flickers around its
    threshold (a temperature at the limit, a GPU spike) flap the node.
    """

    def __init__(self, clear_probes: int = 2) -> None:
        if clear_probes < 1:
            raise ValueError("clear_probes must be 1 or more")
        self.clear_probes = clear_probes
        self._paused = False
        self._clear_count = 0

    @property
    def paused(self) -> bool:
        return self._paused

    def update(self, decision: PauseDecision) -> PauseDecision:
        """The decision to act on, given the one `decide` made for the latest probe."""
        if decision.pause:
            self._paused = True
            self._clear_count = 0
            return decision
        if not self._paused:
            return decision
        self._clear_count += 1
        if self._clear_count >= self.clear_probes:
            self._paused = False
            self._clear_count = 0
            return decision
        sentence = text("pause.resuming")
        return PauseDecision(
            pause=True,
            reason=REASON_RESUMING,
            sentence=sentence,
            sentences=(sentence,),
            reasons=(REASON_RESUMING,),
        )

    def reset(self) -> None:
        """Forget the history (the user turned Contribute off and on again)."""
        self._paused = False
        self._clear_count = 0


def system_probes(platform: str | None = None) -> Probes:
    """The real probes for this OS (or for `platform`, a `sys.platform` value)."""
    from app.probes import SystemProbes  # NVML and psutil load only when the real probes are wanted

    return SystemProbes.for_platform(platform)
