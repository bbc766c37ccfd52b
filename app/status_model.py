"""The node's status as the app knows it, built from the node child's JSON events.

Pure Python (no Qt) so every rule here is testable without a display. The
controller feeds each event line to :meth:`NodeStatus.apply`; widgets only
read this model, never the event stream. A ``snapshot`` event replaces
everything, so a window opened late shows the truth rather than a replay.
"""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.event_words import WHY_BY_REASON, gate_words
from app.texts import TEXTS, number, text
from core.events import (
    KIND_GATE,
    KIND_PROGRESS,
    KIND_SNAPSHOT,
    KIND_STATE,
    KIND_STATS,
    Gate,
    GateState,
    NodeState,
)

log = logging.getLogger(__name__)

# The admission gate refuses a capability report older than this
# (core.doctor.admission_gate.DEFAULT_MAX_REPORT_AGE_SECONDS; not imported: the GUI process
# must not import core modules that pull in torch; core.events is plain Python).
STALE_AFTER_S = 900.0
LOG_LINES_KEPT = 500

# The node's gates and states are core.events' own (plain strings here: they arrive as JSON).
GATE_ORDER: tuple[str, ...] = tuple(gate.value for gate in Gate)
GATE_TITLES: dict[str, str] = {
    Gate.IDENTITY.value: "Identity",
    Gate.PLACEMENT.value: "Layers chosen",
    Gate.CAPABILITY.value: "Capability report",
    Gate.ADMISSION.value: "Admission",
    Gate.DATA_PLANE.value: "Data plane",
    Gate.REGISTRATION.value: "Registration",
    Gate.REACHABILITY.value: "Reachability",
    Gate.RECIPE.value: "Recipe",
    Gate.SESSIONS.value: "Sessions",
}
FAILED_STATES = frozenset({NodeState.REFUSED.value, NodeState.ERROR.value})
# States in which a node child is doing something (not stopped, refused, error).
ACTIVE_STATES = frozenset(
    state.value for state in NodeState if state.value not in FAILED_STATES
) - {NodeState.STOPPED.value}
STARTING_STATES = frozenset(
    state.value
    for state in (
        NodeState.LOADING,
        NodeState.PROBING,
        NodeState.ADMITTING,
        NodeState.STARTING,
        NodeState.REGISTERING,
    )
)
# A gate the node has said nothing of yet: the app's own word, beside core's GateState.
GATE_WAITING = "waiting"


@dataclass
class GateRow:
    """One admission gate: what the node last said about it."""

    name: str
    gate_state: str = GATE_WAITING  # a GateState value, or waiting (nothing yet)
    message: str = ""
    reason: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    at: float | None = None

    @property
    def title(self) -> str:
        return GATE_TITLES.get(self.name, self.name.replace("-", " ").capitalize())


@dataclass(frozen=True)
class Changes:
    """What one event changed, so the controller emits only the signals that matter."""

    state: bool = False
    gates: tuple[str, ...] = ()
    snapshot: bool = False
    recipe_certified: bool = False


def _fresh_gates() -> dict[str, GateRow]:
    return {name: GateRow(name) for name in GATE_ORDER}


def _int(value: Any, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _float_or_none(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def _dict(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


@dataclass
class NodeStatus:
    """Everything the status window, the tray and the diagnostics show."""

    state: str = NodeState.STOPPED.value
    message: str = "Contribution is off."
    reason: str | None = None
    gates: dict[str, GateRow] = field(default_factory=_fresh_gates)
    report: dict[str, Any] | None = None
    registration: dict[str, Any] | None = None
    open_sessions: int = 0
    tokens_served: int = 0
    started_at: float | None = None
    uptime_s: float = 0.0
    uptime_at: float | None = None
    pid: int | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    progress: dict[str, Any] | None = None
    last_event_at: float | None = None
    last_state_event: dict[str, Any] | None = None
    # seconds from the last pause to the memory given back, as the node measured them
    memory_released_s: float | None = None
    log_lines: deque[str] = field(default_factory=lambda: deque(maxlen=LOG_LINES_KEPT))

    # --- feeding ---------------------------------------------------------
    def apply(self, event: Mapping[str, Any]) -> Changes:
        """Fold one protocol event into the model; unknown or malformed events change nothing."""
        kind = event.get("kind")
        at = _float_or_none(event.get("at")) or time.time()
        handler = {
            KIND_STATE: self._apply_state,
            KIND_GATE: self._apply_gate,
            KIND_PROGRESS: self._apply_progress,
            KIND_STATS: self._apply_stats,
            KIND_SNAPSHOT: self._apply_snapshot,
        }.get(kind if isinstance(kind, str) else "")
        if handler is None:
            log.debug("ignoring event of kind %r", kind)
            return Changes()
        self.last_event_at = at
        return handler(event, at)

    def _apply_state(self, event: Mapping[str, Any], at: float) -> Changes:
        state = event.get("state")
        if not isinstance(state, str) or not state:
            return Changes()
        changed = state != self.state
        self.state = state
        self.message = str(event.get("message") or "")
        self.reason = event.get("reason") if isinstance(event.get("reason"), str) else None
        self.last_state_event = {"state": state, "message": self.message, "reason": self.reason}
        if state == NodeState.PAUSED:
            released = _dict(event.get("data")).get("memory_released_s")
            self.memory_released_s = _float_or_none(released)
        if state == NodeState.SERVING and self.started_at is None:
            self.started_at = at
        elif state != NodeState.SERVING:
            self._freeze_uptime(at)
            self.started_at = None
        if state not in STARTING_STATES:
            self.progress = None
        return Changes(state=changed)

    def _apply_gate(self, event: Mapping[str, Any], at: float) -> Changes:
        name = event.get("gate")
        if not isinstance(name, str) or not name:
            return Changes()
        data = _dict(event.get("data"))
        row = GateRow(
            name=name,
            gate_state=str(event.get("gate_state") or GateState.INFO.value),
            message=str(event.get("message") or ""),
            reason=event.get("reason") if isinstance(event.get("reason"), str) else None,
            data=data,
            at=at,
        )
        certified = self._absorb_gate_data(name, data)
        self.gates[name] = row
        return Changes(gates=(name,), recipe_certified=certified)

    def _absorb_gate_data(self, name: str, data: dict[str, Any]) -> bool:
        """Copy what a gate's data says into the top-level fields; True when the
        served recipe has just become certified."""
        if name == Gate.CAPABILITY and isinstance(data.get("report"), Mapping):
            self.report = dict(data["report"])
        elif name == Gate.REGISTRATION and data:
            self.registration = data
        elif name == Gate.SESSIONS:
            self.open_sessions = _int(data.get("open_sessions"), self.open_sessions)
            self.tokens_served = _int(data.get("tokens_served"), self.tokens_served)
        elif name == Gate.RECIPE:
            was = self.gates.get(Gate.RECIPE.value, GateRow(Gate.RECIPE.value)).data.get("status")
            return data.get("status") == "certified" and was != "certified"
        return False

    def _apply_progress(self, event: Mapping[str, Any], at: float) -> Changes:
        data = _dict(event.get("data"))
        self.progress = {
            "stage": str(data.get("stage") or ""),
            "done": _int(data.get("done")),
            "total": _int(data.get("total")),
            "message": str(event.get("message") or ""),
        }
        return Changes()

    def _apply_stats(self, event: Mapping[str, Any], at: float) -> Changes:
        data = _dict(event.get("data"))
        self.open_sessions = _int(data.get("open_sessions"), self.open_sessions)
        self.tokens_served = _int(data.get("tokens_served"), self.tokens_served)
        uptime = _float_or_none(data.get("uptime_s"))
        if uptime is not None:
            self.uptime_s, self.uptime_at = uptime, at
            if self.state == NodeState.SERVING:
                self.started_at = at - uptime
        return Changes()

    def _apply_snapshot(self, event: Mapping[str, Any], at: float) -> Changes:
        data = _dict(event.get("data"))
        before = (self.state, self.message, self.reason)
        self.state = str(data.get("state") or NodeState.STOPPED.value)
        self.message = str(data.get("message") or "")
        self.reason = data.get("reason") if isinstance(data.get("reason"), str) else None
        self.gates = _fresh_gates()
        for name, raw in _dict(data.get("gates")).items():
            gate = _dict(raw)
            self.gates[name] = GateRow(
                name=name,
                gate_state=str(gate.get("gate_state") or GateState.INFO.value),
                message=str(gate.get("message") or ""),
                reason=gate.get("reason") if isinstance(gate.get("reason"), str) else None,
                data=_dict(gate.get("data")),
                at=_float_or_none(gate.get("at")),
            )
        report = data.get("report")
        self.report = dict(report) if isinstance(report, Mapping) else None
        registration = data.get("registration")
        self.registration = dict(registration) if isinstance(registration, Mapping) else None
        self.open_sessions = _int(data.get("open_sessions"))
        self.tokens_served = _int(data.get("tokens_served"))
        self.started_at = _float_or_none(data.get("started_at"))
        self.uptime_s = _float_or_none(data.get("uptime_s")) or 0.0
        self.uptime_at = at
        pid = data.get("pid")
        self.pid = pid if isinstance(pid, int) else self.pid
        self.settings = _dict(data.get("settings"))
        self.memory_released_s = _float_or_none(data.get("memory_released_s"))
        self.last_state_event = {
            "state": self.state,
            "message": self.message,
            "reason": self.reason,
        }
        if self.state not in STARTING_STATES:
            self.progress = None
        changed = before != (self.state, self.message, self.reason)
        return Changes(state=changed, gates=tuple(self.gates), snapshot=True)

    def _freeze_uptime(self, at: float) -> None:
        if self.started_at is not None:
            self.uptime_s, self.uptime_at = max(0.0, at - self.started_at), at

    def add_log_line(self, line: str) -> None:
        self.log_lines.append(line.rstrip("\n"))

    def set_local_state(self, state: str, message: str, reason: str | None = None) -> None:
        """A state the app itself decides (starting a child, the child exited)."""
        self.apply({"kind": KIND_STATE, "state": state, "message": message, "reason": reason})

    def reset_for_start(self) -> None:
        """A new child is starting: forget the previous one's gates and numbers."""
        logs = self.log_lines
        self.__init__()  # type: ignore[misc]
        self.log_lines = logs

    # --- reading ---------------------------------------------------------
    @property
    def active(self) -> bool:
        return self.state in ACTIVE_STATES

    @property
    def shard(self) -> tuple[int, int] | None:
        for source in (self.registration, self.report):
            if not source:
                continue
            shard = source.get("shard")
            if isinstance(shard, list | tuple) and len(shard) == 2:
                return _int(shard[0]), _int(shard[1])
            if isinstance(shard, Mapping) and "start" in shard:
                return _int(shard.get("start")), _int(shard.get("end"))
        layers = self.settings.get("layers")
        if isinstance(layers, list | tuple) and len(layers) == 2:
            return _int(layers[0]), _int(layers[1])
        return None

    @property
    def model_id(self) -> str | None:
        for source in (self.registration, self.report and _dict(self.report.get("model"))):
            if source and source.get("model_id"):
                return str(source["model_id"])
        return None

    def report_age(self, now: float | None = None) -> float | None:
        validated = _float_or_none((self.report or {}).get("validated_at"))
        if validated is None:
            return None
        return max(0.0, (time.time() if now is None else now) - validated)

    def time_left_before_stale(self, now: float | None = None) -> float | None:
        age = self.report_age(now)
        return None if age is None else STALE_AFTER_S - age

    def uptime(self, now: float | None = None) -> float:
        now = time.time() if now is None else now
        if self.state == NodeState.SERVING and self.started_at is not None:
            return max(0.0, now - self.started_at)
        return self.uptime_s if self.state == NodeState.SERVING else 0.0

    def recent_log(self, count: int = 50) -> list[str]:
        return list(self.log_lines)[-count:]


# --- words the app shows ---------------------------------------------------
# The main path's words come from app.texts (plain, translated); the Details
# view keeps the engineer's words (GATE_TITLES, gate_sentence, layers_text).
STATE_KEYS: tuple[str, ...] = tuple(state.value for state in NodeState)


def state_label(state: str) -> str:
    """A state in one or two plain words ("Contributing", "Paused")."""
    return text(f"state.{state}") if state in STATE_KEYS else state.capitalize()


def why_sentence(status: NodeStatus) -> str:
    """Why the node is refused or stopped, in plain words, with what to do next."""
    key = WHY_BY_REASON.get(status.reason or "")
    if key is None:
        key = "why.refused" if status.state == NodeState.REFUSED else "why.other"
    return text(key)


def tray_state(state: str) -> str:
    """The five tray looks: off, starting, serving, paused, error."""
    if state == NodeState.SERVING:
        return "serving"
    if state in (NodeState.PAUSED, NodeState.PAUSING):
        return "paused"
    if state in FAILED_STATES:
        return "error"
    if state in ACTIVE_STATES:
        return "starting"
    return "off"


def format_duration(seconds: float) -> str:
    """ "42 s", "5 min", "2 h 05 min", "3 d 4 h" in the chosen language's units."""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return text("duration.seconds", count=seconds)
    minutes = seconds // 60
    if minutes < 60:
        return text("duration.minutes", count=minutes)
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return text("duration.hours", hours=hours, minutes=f"{minutes:02d}")
    days, hours = divmod(hours, 24)
    return text("duration.days", days=number(days), hours=hours)


def format_count(value: int) -> str:
    return number(value)


def layers_text(shard: tuple[int, int] | None) -> str:
    return f"layers {shard[0]}–{shard[1]}" if shard else "a shard"


def short_model_name(model_id: str) -> str:
    """ "HuggingFaceTB/SmolLM2-135M-Instruct" -> "SmolLM2-135M-Instruct"."""
    return model_id.rstrip("/").rsplit("/", 1)[-1]


def tooltip_text(status: NodeStatus) -> str:
    """One line for the tray tooltip, e.g. "MeshNet — contributing: helping answer questions"."""
    state = status.state
    if state == NodeState.SERVING:
        return text("tooltip.serving.relay" if relay_note(status) else "tooltip.serving")
    if state == NodeState.STOPPED:
        return text("tooltip.stopped")
    if state in FAILED_STATES:
        label = state_label(state).lower()
        return text("tooltip.problem", state=label, sentence=why_sentence(status))
    if state == NodeState.PAUSED and status.message:  # the app's pause rules wrote it: plain
        return text("tooltip.problem", state=state_label(state).lower(), sentence=status.message)
    return text("tooltip.other", state=state_label(state).lower())


def gate_title(name: str) -> str:
    """A gate's name in the chosen language (the Details view's rows)."""
    if name in GATE_TITLES:
        return text(f"gate.{name}")
    return name.replace("-", " ").capitalize()


def gate_sentence(row: GateRow, status: NodeStatus, now: float | None = None) -> str:
    """The sentence a gate row shows; the capability row adds the report's age."""
    if row.gate_state == GATE_WAITING:
        if row.name == Gate.PLACEMENT and status.shard is not None:
            # A node started with fixed layers never asks the tracker which to serve.
            start, end = status.shard
            return text("gate.placement.fixed", start=start, end=end)
        if status.active:
            return text("gate.not-checked")
        return text("gate.not-reached") if status.state in FAILED_STATES else "—"
    sentence = gate_words(row.name, row.gate_state, row.reason, row.data, row.message)
    if row.name == Gate.CAPABILITY:
        age = status.report_age(now)
        left = status.time_left_before_stale(now)
        if age is not None and left is not None:
            freshness = (
                text("gate.report.fresh", age=format_duration(age), left=format_duration(left))
                if left > 0
                else text("gate.report.stale", age=format_duration(age))
            )
            sentence = f"{sentence}\n{freshness}" if sentence else freshness
    return sentence


def diagnostics_text(
    status: NodeStatus, versions: Mapping[str, str], now: float | None = None
) -> str:
    """Plain text for "Copy diagnostics": enough for someone helping by chat."""
    now = time.time() if now is None else now
    lines = [
        "MeshNet diagnostics",
        f"time: {time.strftime('%Y-%m-%d %H:%M:%S %Z', time.localtime(now))}",
        *(f"{name}: {value}" for name, value in versions.items()),
        "",
        f"state: {status.state} — {status.message}"
        + (f" (reason: {status.reason})" if status.reason else ""),
        f"tokens served: {status.tokens_served}, open sessions: {status.open_sessions}, "
        f"uptime: {format_duration(status.uptime(now))}",
        f"node settings: {json.dumps(status.settings, sort_keys=True)}",
        "",
        "gates:",
    ]
    for name in GATE_ORDER:
        row = status.gates.get(name, GateRow(name))
        reason = f" [{row.reason}]" if row.reason else ""
        sentence = gate_sentence(row, status, now).replace("\n", " ")
        lines.append(f"  {name}: {row.gate_state}{reason} — {sentence}")
    lines += ["", "registration:", json.dumps(status.registration, indent=2, sort_keys=True)]
    lines += ["", "capability report:", json.dumps(status.report, indent=2, sort_keys=True)]
    lines += ["", "recent log lines:", *status.recent_log(40)]
    return "\n".join(lines) + "\n"


def relay_note(status: NodeStatus) -> str | None:
    """ "Serving through a relay because …" while the node's reachability gate says it is."""
    row = status.gates.get(Gate.REACHABILITY)
    if row is None or not row.data.get("relay"):
        return None
    why = row.data.get("relay_why") or "the tracker could not dial this computer directly"
    return f"Serving through a relay because {why}."


def headline(status: NodeStatus) -> tuple[str, str]:
    """(title, sentence) for the status window's banner: what is happening, what to do.

    Plain words only: the node's own messages (which name gates and reason codes)
    are shown in Details; a pause keeps its sentence (the app's pause rules wrote it).
    """
    state = status.state
    if state == NodeState.STOPPED:
        return text("headline.stopped"), text("sentence.stopped")
    if state == NodeState.SERVING:
        model = short_model_name(status.model_id) if status.model_id else None
        sentence = (
            text("sentence.serving.model", model=model) if model else text("sentence.serving")
        )
        if relay_note(status):
            sentence = f"{sentence} {text('sentence.relay')}"
        return text("headline.serving"), sentence
    if state in (NodeState.PAUSED, NodeState.PAUSING):
        sentence = status.message or text("sentence.paused")
        released = status.memory_released_s
        if state == NodeState.PAUSED and released is not None:
            said = text("sentence.paused.released", seconds=number(max(released, 0.01), 2))
            sentence = f"{sentence.rstrip('.')}. {said}"
        return text("headline.paused"), sentence
    if state in FAILED_STATES:
        return text(f"headline.{state}"), why_sentence(status)
    if state == NodeState.DRAINING:
        return text("headline.draining"), text("sentence.draining")
    sentence = text(f"sentence.{state}") if f"sentence.{state}" in TEXTS else ""
    progress = status.progress
    if progress:
        total = progress.get("total") or 0
        if total > 0:
            percent = number(100 * progress.get("done", 0) // total)
            sentence = text("sentence.percent", sentence=sentence, percent=percent)
    return state_label(state) + "…", sentence
