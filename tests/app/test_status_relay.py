"""The tray's words for a node that serves through a relay, and why."""

from __future__ import annotations

from app.status_model import gate_sentence, headline, relay_note, tooltip_text
from tests.app.test_status_model import NOW, event, serving_status

WHY = "the tracker could not dial this node directly (no answer within 2 s)"


def test_a_relayed_node_says_it_serves_through_a_relay_and_why() -> None:
    status = serving_status()
    assert relay_note(status) is None
    status.apply(
        event(
            "gate",
            f"Serving through a relay (ws://t:8765/relay) because {WHY}. The tracker: reachable",
            NOW,
            gate="reachability",
            gate_state="passed",
            data={"reachability": "reachable", "relay": "ws://t:8765/relay", "relay_why": WHY},
        )
    )
    assert relay_note(status) == f"Serving through a relay because {WHY}."
    # the main view says it plainly; the node's reason stays in Details (the gate row)
    assert "through a relay, because the network cannot reach" in headline(status)[1]
    assert "dial" not in headline(status)[1]
    assert "through a relay" in tooltip_text(status)
    assert gate_sentence(status.gates["reachability"], status).startswith("Serving through a relay")


def test_a_direct_node_says_nothing_of_relays() -> None:
    status = serving_status()
    status.apply(
        event(
            "gate",
            "answered the signed challenge in 3 ms",
            NOW,
            gate="reachability",
            gate_state="passed",
            data={"reachability": "reachable", "relay": None},
        )
    )
    assert relay_note(status) is None
    assert "relay" not in headline(status)[1] and "relay" not in tooltip_text(status)
