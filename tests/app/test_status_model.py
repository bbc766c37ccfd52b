"""NodeStatus: every protocol event kind, snapshots, clocks and the words shown."""

from __future__ import annotations

from typing import Any

from app.status_model import (
    GATE_ORDER,
    LOG_LINES_KEPT,
    STALE_AFTER_S,
    NodeStatus,
    diagnostics_text,
    format_duration,
    gate_sentence,
    headline,
    tooltip_text,
    tray_state,
)

NOW = 1_800_000_000.0


def event(kind: str, message: str = "", at: float = NOW, **fields: Any) -> dict[str, Any]:
    return {
        "kind": kind,
        "message": message,
        "state": fields.get("state"),
        "gate": fields.get("gate"),
        "gate_state": fields.get("gate_state"),
        "reason": fields.get("reason"),
        "data": fields.get("data", {}),
        "at": at,
    }


def serving_status() -> NodeStatus:
    status = NodeStatus()
    status.apply(event("state", "Loading", NOW - 100, state="loading"))
    status.apply(
        event(
            "gate",
            "Report passed",
            NOW - 90,
            gate="capability",
            gate_state="passed",
            data={"report": {"validated_at": NOW - 120, "shard": {"start": 0, "end": 15}}},
        )
    )
    status.apply(
        event(
            "gate",
            "Registered",
            NOW - 80,
            gate="registration",
            gate_state="passed",
            data={"node_id": "n1", "shard": [0, 15], "model_id": "org/Model-1B"},
        )
    )
    status.apply(event("state", "Serving", NOW - 60, state="serving"))
    return status


def test_a_new_status_is_off_with_every_gate_waiting() -> None:
    status = NodeStatus()
    assert status.state == "stopped"
    assert list(status.gates) == list(GATE_ORDER)
    assert all(row.gate_state == "waiting" for row in status.gates.values())
    assert not status.active


def test_state_and_gate_events_fill_the_model() -> None:
    status = serving_status()
    assert status.state == "serving"
    assert status.active
    assert status.report is not None and status.report["validated_at"] == NOW - 120
    assert status.registration is not None and status.registration["node_id"] == "n1"
    assert status.shard == (0, 15)
    assert status.model_id == "org/Model-1B"
    assert status.gates["capability"].at == NOW - 90
    assert status.started_at == NOW - 60


def test_state_change_is_reported_only_when_the_state_changes() -> None:
    status = NodeStatus()
    assert status.apply(event("state", "Loading", state="loading")).state
    assert not status.apply(event("state", "Still loading", state="loading")).state
    assert status.message == "Still loading"


def test_refused_state_keeps_reason_and_sentence() -> None:
    status = NodeStatus()
    status.apply(event("state", "Not enough memory.", state="refused", reason="out-of-memory"))
    assert (status.state, status.reason, status.message) == (
        "refused",
        "out-of-memory",
        "Not enough memory.",
    )
    assert status.last_state_event == {
        "state": "refused",
        "message": "Not enough memory.",
        "reason": "out-of-memory",
    }
    assert tray_state(status.state) == "error"


def test_sessions_gate_and_stats_update_the_numbers() -> None:
    status = serving_status()
    status.apply(
        event(
            "gate",
            "1 session",
            gate="sessions",
            gate_state="info",
            data={"open_sessions": 1, "tokens_served": 40},
        )
    )
    assert (status.open_sessions, status.tokens_served) == (1, 40)
    status.apply(event("stats", data={"open_sessions": 3, "tokens_served": 120, "uptime_s": 90}))
    assert (status.open_sessions, status.tokens_served) == (3, 120)
    assert status.uptime(NOW + 10) == 100  # 90 s at the event, 10 s since


def test_progress_events_are_kept_while_starting_and_dropped_after() -> None:
    status = NodeStatus()
    status.apply(event("state", "Loading", state="loading"))
    status.apply(
        event("progress", "Loading layers 0–15…", data={"stage": "load", "done": 3, "total": 4})
    )
    assert status.progress == {
        "stage": "load",
        "done": 3,
        "total": 4,
        "message": "Loading layers 0–15…",
    }
    # the node's sentence names layers: the banner says it plainly, with the percentage
    assert headline(status)[1] == "Loading the model onto this computer… (75%)"
    status.apply(event("state", "Serving", state="serving"))
    assert status.progress is None


def test_snapshot_replaces_everything() -> None:
    status = serving_status()
    status.add_log_line("INFO kept")
    changes = status.apply(
        event(
            "snapshot",
            at=NOW,
            data={
                "state": "paused",
                "message": "Paused for a game",
                "reason": None,
                "gates": {
                    "identity": {
                        "gate_state": "passed",
                        "message": "Key ready",
                        "reason": None,
                        "data": {},
                        "at": NOW - 500,
                    }
                },
                "report": None,
                "registration": None,
                "open_sessions": 0,
                "tokens_served": 77,
                "started_at": None,
                "uptime_s": 0,
                "pid": 4242,
                "settings": {"tracker_url": "http://t", "layers": [2, 9]},
            },
        )
    )
    assert changes.snapshot and changes.state
    assert status.state == "paused" and status.message == "Paused for a game"
    assert status.gates["identity"].message == "Key ready"
    assert status.gates["registration"].gate_state == "waiting"  # gone, not kept from before
    assert status.report is None and status.registration is None
    assert status.tokens_served == 77 and status.pid == 4242
    assert status.shard == (2, 9)  # from the settings when nothing else says
    assert list(status.log_lines) == ["INFO kept"]  # the app's own log survives


def test_report_age_and_time_left_before_stale() -> None:
    status = serving_status()
    assert status.report_age(NOW) == 120
    assert status.time_left_before_stale(NOW) == STALE_AFTER_S - 120
    sentence = gate_sentence(status.gates["capability"], status, NOW)
    assert sentence == "Report passed\nReport 2 min old, stale in 13 min."
    late = gate_sentence(status.gates["capability"], status, NOW + STALE_AFTER_S)
    assert "stale; Retry tests this computer again" in late
    assert NodeStatus().report_age(NOW) is None


def test_the_placement_row_of_a_node_with_fixed_layers_says_where_they_came_from() -> None:
    assert gate_sentence(NodeStatus().gates["placement"], NodeStatus(), NOW) == "—"
    status = serving_status()  # started with layers 0-15: no placement event ever comes
    row = status.gates["placement"]
    assert row.gate_state == "waiting"
    assert gate_sentence(row, status, NOW) == "Layers 0–15, as set in Settings."
    status.apply(
        event("gate", "Layers 15–30 have the fewest servers", gate="placement", gate_state="passed")
    )
    assert gate_sentence(status.gates["placement"], status, NOW).startswith("Layers 15–30 have")


def test_log_lines_are_bounded() -> None:
    status = NodeStatus()
    for index in range(LOG_LINES_KEPT + 25):
        status.add_log_line(f"line {index}\n")
    assert len(status.log_lines) == LOG_LINES_KEPT
    assert status.recent_log(2) == [f"line {LOG_LINES_KEPT + 23}", f"line {LOG_LINES_KEPT + 24}"]


def test_malformed_events_change_nothing() -> None:
    status = NodeStatus()
    for bad in (
        {},
        {"kind": 3},
        {"kind": "unknown"},
        {"kind": "state", "state": None},
        {"kind": "gate", "gate": ""},
        {"kind": "stats", "data": "nonsense"},
        {"kind": "snapshot", "data": None, "at": "later"},
    ):
        status.apply(bad)
    assert status.tokens_served == 0
    assert all(row.gate_state == "waiting" for row in status.gates.values())


def test_recipe_becoming_certified_is_flagged_once() -> None:
    status = serving_status()
    dark = {"status": "dark", "detail": "waiting"}
    certified = {"status": "certified", "detail": "2 nodes"}
    assert not status.apply(
        event("gate", gate="recipe", gate_state="info", data=dark)
    ).recipe_certified
    assert status.apply(
        event("gate", gate="recipe", gate_state="passed", data=certified)
    ).recipe_certified
    assert not status.apply(
        event("gate", gate="recipe", gate_state="passed", data=certified)
    ).recipe_certified


def test_words_for_the_tray_and_the_banner() -> None:
    status = serving_status()
    status.apply(event("stats", data={"open_sessions": 1, "tokens_served": 120, "uptime_s": 5}))
    assert tooltip_text(status) == "MeshNet — contributing: helping answer questions"
    assert headline(status) == (
        "Contributing",
        "Thank you: this computer is helping the network answer questions with Model-1B.",
    )
    assert tooltip_text(NodeStatus()) == "MeshNet — not contributing"
    assert [tray_state(s) for s in ("stopped", "loading", "serving", "paused", "error")] == [
        "off",
        "starting",
        "serving",
        "paused",
        "error",
    ]
    assert format_duration(59) == "59 s"
    assert format_duration(3 * 3600 + 5 * 60) == "3 h 05 min"
    assert format_duration(2 * 86400 + 3600) == "2 d 1 h"


def test_a_pause_says_how_soon_the_memory_was_free_and_a_stop_what_happens_to_answers() -> None:
    status = serving_status()
    status.apply(event("state", "handing open sessions over", state="pausing"))
    assert headline(status) == ("Paused", "handing open sessions over")  # not measured yet
    status.message = "Paused: the graphics card is busy with another program"
    status.apply(
        event(
            "state",
            "Paused: the graphics card is busy with another program",
            state="paused",
            data={"memory_released_s": 0.2431, "sessions_ended_s": 0.05},
        )
    )
    assert status.memory_released_s == 0.2431
    assert headline(status) == (
        "Paused",
        "Paused: the graphics card is busy with another program. The memory MeshNet used "
        "was free again 0.24 seconds after the pause.",
    )
    snapshot = {"state": "paused", "message": "Paused.", "memory_released_s": 1.5}
    status.apply(event("snapshot", data=snapshot))
    assert status.memory_released_s == 1.5  # a window opened late says it too
    assert headline(status)[1].endswith("free again 1.50 seconds after the pause.")
    status.apply(event("state", "Stopping", state="draining"))
    assert headline(status) == (
        "Stopping",
        "Handing the answers under way to other computers, then leaving the network…",
    )


def test_diagnostics_text_has_state_gates_report_log_and_versions() -> None:
    status = serving_status()
    status.add_log_line("INFO core.node: hello")
    text = diagnostics_text(status, {"MeshNet": "0.1.0", "Qt": "6.12"}, now=NOW)
    assert "MeshNet: 0.1.0" in text and "Qt: 6.12" in text
    assert "state: serving" in text
    assert "capability: passed — Report passed Report 2 min old, stale in 13 min." in text
    assert '"node_id": "n1"' in text
    assert '"validated_at"' in text
    assert text.rstrip().endswith("INFO core.node: hello")
