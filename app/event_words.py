"""The node's events in the user's language (issue 37).

The node child speaks English, but every event carries stable codes next to its
sentence: a progress event its ``stage`` and counts, a gate event the gate's
name, state and reason code, a failure its reason code (``meshnet-node: … [code]``).
This module turns those codes (and the event's data, for parameters) into the
catalogue's sentences, so German and Spanish users read German and Spanish; it falls
back to the node's own English sentence only for a code it does not know. Numbers
follow the locale (``app.texts.number``, ``percent``). No Qt here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.texts import number, percent, text

# Reason codes (core's refusals and the app's own) -> the plain "why" sentence.
WHY_BY_REASON: dict[str, str] = {
    "out-of-memory": "why.out-of-memory",
    "too-little-memory": "why.too-little-memory",
    "load-failed": "why.load-failed",
    "probe-failed": "why.test-failed",
    "probe-timeout": "why.test-failed",
    "not-passed": "why.test-failed",
    "serving-failed": "why.cannot-serve",
    "crashed-twice": "why.crashed-twice",
    "no-report": "why.stale",
    "stale": "why.stale",
    "model-mismatch": "why.mismatch",
    "shard-mismatch": "why.mismatch",
    "recipe-mismatch": "why.mismatch",
    "backend-mismatch": "why.mismatch",
    "bad-layers": "why.mismatch",
    "tracker-unreachable": "why.network",
    "unreachable": "why.network",
    "network": "why.network",
    "crashed": "why.crashed",
    "bad-settings": "why.settings",
    "no-tracker": "why.not-joined",
    "not-joined": "why.not-joined",
}


# progress stages (core/progress.py's STAGES) -> the sentence, with and without a count
STAGE_KEYS: dict[str, str] = {
    "import": "event.progress.import",
    "fetch": "event.progress.fetch",
    "load": "event.progress.load",
    "probe": "event.progress.probe",
}


def progress_sentence(event: Mapping[str, Any]) -> str:
    """ "Preparing the model for this computer… 58 %" from a progress event's stage and
    counts; the node's sentence for a stage this app does not know."""
    data = event.get("data") if isinstance(event.get("data"), Mapping) else {}
    assert isinstance(data, Mapping)
    key = STAGE_KEYS.get(str(data.get("stage") or ""))
    if key is None:
        return str(event.get("message") or "")
    done, total = data.get("done"), data.get("total")
    if isinstance(done, int) and isinstance(total, int) and total > 0:
        return text("event.progress.count", sentence=text(key), percent=percent(100 * done / total))
    return text(key)


def _shard(data: Mapping[str, Any]) -> tuple[Any, Any] | None:
    report = data.get("report") if isinstance(data.get("report"), Mapping) else None
    shard = (report or {}).get("shard") if report else data.get("shard")
    if isinstance(shard, Mapping) and "start" in shard:
        return shard.get("start"), shard.get("end")
    if isinstance(shard, list | tuple) and len(shard) == 2:
        return shard[0], shard[1]
    return None


def gate_words(
    gate: str, gate_state: str, reason: str | None, data: Mapping[str, Any], message: str
) -> str:
    """A gate row's sentence for the Details view, in the user's language.

    Known passes are said from their codes and data; a failure with a known reason
    code says what to do (the code stays beside it, in the reason column); anything
    else keeps the node's sentence."""
    if reason:
        return failure_sentence(reason, message)
    if gate_state != "passed" and not (gate == "sessions" and gate_state == "info"):
        return message
    if gate == "capability":
        shard, report = _shard(data), data.get("report")
        speed = report.get("tokens_per_second") if isinstance(report, Mapping) else None
        if shard and isinstance(speed, int | float):
            return text(
                "event.gate.capability", start=shard[0], end=shard[1], speed=number(speed, 1)
            )
        return message
    if gate == "sessions":
        sessions, tokens = data.get("open_sessions"), data.get("tokens_served")
        if isinstance(sessions, int) and isinstance(tokens, int):
            return text("event.gate.sessions", sessions=number(sessions), tokens=number(tokens))
        return message
    if gate == "reachability":
        if data.get("relay"):
            return text("event.gate.relay")
        return text("event.gate.reachability")
    if gate in ("admission", "registration"):
        return text(f"event.gate.{gate}")
    # these two name a value only their English sentence carries: keep it, translate
    # the rest ("node <id>", "listening on <endpoint>", core/node/lifecycle.py)
    if gate == "identity" and message.startswith("node "):
        return text("event.gate.identity", node=message.removeprefix("node "))
    if gate == "data-plane" and message.startswith("listening on "):
        return text("event.gate.data-plane", endpoint=message.removeprefix("listening on "))
    return message


def failure_sentence(reason: str | None, english: str) -> str:
    """What to do about a failure with reason ``reason``, in the user's language; the
    node's English sentence for a code this app does not know."""
    key = WHY_BY_REASON.get(reason or "")
    return text(key) if key else english


def child_error_sentence(line: str) -> str:
    """``meshnet-node: <English> [code]`` -> the code's sentence, else the English one."""
    sentence = line.removeprefix("meshnet-node: ")
    english, bracket, rest = sentence.rpartition(" [")
    if bracket and rest.endswith("]"):
        return failure_sentence(rest[:-1], english)
    return sentence
