"""The contributor app's settings: one frozen value, its checks, and a tolerant codec.

Everything the settings dialog edits, the node command line is built from and the
pause rules read lives in `AppSettings`. The join token is not here: it belongs in
the OS keyring (`core.network.join_tokens`), never in a settings file.

`validate_settings` returns one sentence per bad field, saying what to do, so the
dialog can show each beside its field (app.details_texts' ``problem.*``, translated).
`settings_from_dict` never raises: a stored
value that is missing, of the wrong type or out of range falls back to its default
(logged), so a hand-edited or older settings store cannot keep the app from starting.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any
from urllib.parse import urlsplit

from app.errors import StoredValueUnreadable
from app.texts import number, text
from core.network.credit_account import MAX_LABEL_LEN

log = logging.getLogger(__name__)

# Empty: the app uses the network it joined (an invite). An address here is the
# Advanced choice "I run my own tracker".
DEFAULT_TRACKER_URL = ""
MIN_MEMORY_CAP_MB = 256
GPU_TEMP_MIN_C, GPU_TEMP_MAX_C = 40, 100
IDLE_MINUTES_MIN, IDLE_MINUTES_MAX = 1, 240
_DEVICE = re.compile(r"^(cpu|mps|cuda(:\d+)?)$")


@dataclass(frozen=True)
class AppSettings:
    tracker_url: str = DEFAULT_TRACKER_URL
    model: str | None = None  # None = the packaged default model
    layers: tuple[int, int] | None = None  # None = the doctor's suggestion
    device: str | None = None  # None = best found; "cpu", "cuda:0", "mps"
    memory_cap_mb: int | None = None
    start_at_login: bool = False
    pause_when_gpu_busy: bool = True
    pause_above_gpu_temp_c: int | None = None
    pause_programs: tuple[str, ...] = ()  # executable names, e.g. "eldenring.exe"
    pause_on_battery: bool = True
    idle_minutes: int | None = None  # contribute only after N idle minutes
    run_batch_jobs: bool = False  # run the tracker's batch jobs while not serving a route
    # Opt-in: shown on the network's credit leaderboard ("" shows none; app/credit_link.py)
    display_name: str = ""
    team: str = ""


def tracker_url_problem(url: str) -> str | None:
    """The sentence that says what is wrong with a tracker URL, or None when it is usable."""
    address = url.strip()
    if not address:
        return text("problem.url.empty")
    try:
        parts = urlsplit(address)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        return text("problem.url.invalid")
    if parts.scheme not in ("http", "https"):
        return text("problem.url.scheme")
    if not parts.hostname:
        return text("problem.url.host")
    return None


def _program_problem(names: tuple[str, ...]) -> str | None:
    for name in names:
        if not name.strip():
            return text("problem.program.empty")
        if "/" in name or "\\" in name:
            return text("problem.program.path", name=repr(name))
    return None


def _gb(megabytes: int) -> str:
    """Megabytes as Settings shows them, rounded down: 255 -> "0.24 GB" (1 GB = 1024 MB),
    so a value just under the least never reads as the least itself."""
    return text("size.gb", size=number(math.floor(megabytes / 1024 * 100) / 100, 2))


def validate_settings(s: AppSettings) -> dict[str, str]:
    """Field name -> a sentence saying what to change; empty when every field is valid."""
    problems: dict[str, str] = {}
    url_problem = tracker_url_problem(s.tracker_url) if s.tracker_url.strip() else None
    if url_problem is not None:
        problems["tracker_url"] = url_problem
    if s.model is not None and not s.model.strip():
        problems["model"] = text("problem.model")
    if s.layers is not None:
        start, end = s.layers
        if start < 0:
            problems["layers"] = text("problem.layers.start")
        elif start >= end:
            problems["layers"] = text("problem.layers.empty", start=start, end=end, next=start + 1)
    if s.device is not None and not _DEVICE.match(s.device):
        problems["device"] = text("problem.device", device=repr(s.device))
    if s.memory_cap_mb is not None and s.memory_cap_mb < MIN_MEMORY_CAP_MB:
        problems["memory_cap_mb"] = text(
            "problem.memory.gb", size=_gb(s.memory_cap_mb), least=_gb(MIN_MEMORY_CAP_MB)
        )
    temp = s.pause_above_gpu_temp_c
    if temp is not None and not GPU_TEMP_MIN_C <= temp <= GPU_TEMP_MAX_C:
        problems["pause_above_gpu_temp_c"] = text(
            "problem.gpu-temp", low=GPU_TEMP_MIN_C, high=GPU_TEMP_MAX_C, temp=temp
        )
    idle = s.idle_minutes
    if idle is not None and not IDLE_MINUTES_MIN <= idle <= IDLE_MINUTES_MAX:
        problems["idle_minutes"] = text(
            "problem.idle", low=IDLE_MINUTES_MIN, high=IDLE_MINUTES_MAX, idle=idle
        )
    for name, label in (("display_name", s.display_name), ("team", s.team)):
        if len(label) > MAX_LABEL_LEN or not label.isprintable():
            problems[name] = text("problem.label", count=MAX_LABEL_LEN)
    program_problem = _program_problem(s.pause_programs)
    if program_problem is not None:
        problems["pause_programs"] = program_problem
    return problems


def settings_to_dict(s: AppSettings) -> dict[str, Any]:
    """Plain JSON-friendly values (lists, not tuples) keyed by field name."""
    return {
        "tracker_url": s.tracker_url,
        "model": s.model,
        "layers": list(s.layers) if s.layers is not None else None,
        "device": s.device,
        "memory_cap_mb": s.memory_cap_mb,
        "start_at_login": s.start_at_login,
        "pause_when_gpu_busy": s.pause_when_gpu_busy,
        "pause_above_gpu_temp_c": s.pause_above_gpu_temp_c,
        "pause_programs": list(s.pause_programs),
        "pause_on_battery": s.pause_on_battery,
        "idle_minutes": s.idle_minutes,
        "run_batch_jobs": s.run_batch_jobs,
        "display_name": s.display_name,
        "team": s.team,
    }


def _is_none(value: Any) -> bool:
    # QSettings stores None as an empty string or an invalid QVariant (None).
    return value is None or (isinstance(value, str) and value.strip().lower() in ("", "none"))


def _as_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "1", "yes", "on"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "0", "no", "off"):
        return False
    raise StoredValueUnreadable(value)


def _as_int(value: Any) -> int:
    if isinstance(value, bool):
        raise StoredValueUnreadable(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise StoredValueUnreadable(value)


def _as_optional_int(value: Any) -> int | None:
    return None if _is_none(value) else _as_int(value)


def _as_str(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    raise StoredValueUnreadable(value)


def _as_optional_str(value: Any) -> str | None:
    return None if _is_none(value) else _as_str(value)


def _as_layers(value: Any) -> tuple[int, int] | None:
    if _is_none(value):
        return None
    if isinstance(value, str):
        value = re.split(r"\s*[,–-]\s*", value.strip())
    if isinstance(value, list | tuple) and len(value) == 2:
        return (_as_int(value[0]), _as_int(value[1]))
    raise StoredValueUnreadable(value)


def _as_programs(value: Any) -> tuple[str, ...]:
    if _is_none(value):
        return ()
    if isinstance(value, str):  # QSettings returns a one-item list as a plain string
        value = [value]
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value if v.strip())
    raise StoredValueUnreadable(value)


_READERS: dict[str, Callable[[Any], Any]] = {
    "tracker_url": _as_str,
    "model": _as_optional_str,
    "layers": _as_layers,
    "device": _as_optional_str,
    "memory_cap_mb": _as_optional_int,
    "start_at_login": _as_bool,
    "pause_when_gpu_busy": _as_bool,
    "pause_above_gpu_temp_c": _as_optional_int,
    "pause_programs": _as_programs,
    "pause_on_battery": _as_bool,
    "idle_minutes": _as_optional_int,
    "run_batch_jobs": _as_bool,
    "display_name": _as_str,
    "team": _as_str,
}


def settings_from_dict(d: Mapping[str, Any]) -> AppSettings:
    """Read stored values; anything unreadable or invalid falls back to its default."""
    defaults = AppSettings()
    values: dict[str, Any] = {}
    for f in fields(AppSettings):
        if f.name not in d:
            continue
        raw = d[f.name]
        try:
            value = _READERS[f.name](raw)
        except StoredValueUnreadable:
            log.warning(
                "settings: ignoring stored %s=%r (not readable); using the default", f.name, raw
            )
            continue
        problems = validate_settings(replace(defaults, **{f.name: value}))
        if f.name in problems:
            log.warning(
                "settings: ignoring stored %s=%r (%s); using the default",
                f.name,
                raw,
                problems[f.name],
            )
            continue
        values[f.name] = value
    return replace(defaults, **values)
