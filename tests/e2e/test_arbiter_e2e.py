"""Issue 28, "a liar with no third opinion", on real processes: two nodes serve layers
0-15 of the default model (one lies on every step after passing the doctor), one serves
15-30. Every hop is audited. The first audit that meets the liar finds the two 0-15 nodes
disagreeing with no third to decide: both are withdrawn, the model shows as unavailable
with the reason, and no chat is answered through the liar. A fourth node started without
--layers is recruited for 0-15, the tracker replays the disputed steps on it, the liar is
quarantined with its own signed receipt, and the honest node serves again.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import openai
import pytest

from app.demo.processes import Child, start_node, start_tracker
from tests.e2e.test_gateway_e2e import NEW_TOKENS, Network, greedy_answer, openai_stream
from tests.support.audit_env import audit_every_step
from tests.support.lying_node import start_lying_node
from tests.support.node_lines import registered_node_id
from tests.support.waiting import wait_until

pytestmark = pytest.mark.slow

ANSWERED = re.compile(r"outcome=ok route=(?P<route>.*?) prompt_tokens=\d+ completion_tokens=(\d+)")
DISPUTE_LINE = "no third node to decide"


def _text(line: object) -> str:
    if isinstance(line, dict):
        return str(line.get("message", ""))
    return str(line)


def test_a_liar_with_no_third_opinion_is_withdrawn_then_convicted_by_a_recruited_arbiter(
    default_model_dir: Path, tmp_path: Path
) -> None:
    registered: dict[str, str] = {}
    events: list[tuple[str, str]] = []  # (child, line) in arrival order
    placements: dict[str, dict[str, Any]] = {}

    def on_line(name: str, line: object) -> None:
        if (node_id := registered_node_id(line)) is not None:
            registered[name] = node_id
        if isinstance(line, dict) and line.get("gate") == "placement":
            placements[name] = line
        events.append((name, _text(line)))

    restore_environment = audit_every_step()
    children: list[Child] = []
    try:
        tracker, url = start_tracker(tmp_path, on_line, heartbeat_s=1.0)
        children.append(tracker)
        children.append(start_node(1, tmp_path, url, default_model_dir, (0, 15), on_line))
        children.append(start_node(2, tmp_path, url, default_model_dir, (15, 30), on_line))
        network = Network(url, tmp_path, default_model_dir, tracker, {})
        wait_until(
            lambda: any(r["status"] == "certified" for r in network.state()["recipes"]),
            400,
            "two honest nodes to certify the recipe",
        )
        children.append(start_lying_node(3, tmp_path, url, default_model_dir, (0, 15), on_line))
        wait_until(
            lambda: (
                len(registered) == 3
                and sum(n["reachability"] == "reachable" for n in network.state()["nodes"]) == 3
            ),
            300,
            "the liar to register and be reachable",
        )
        honest, liar = registered["node 1"], registered["node 3"]
        expected = greedy_answer(default_model_dir, NEW_TOKENS)

        # Chats until the first dispute; each is either exact or refused, never a lie.
        refused: list[str] = []
        for _ in range(12):  # the route picks one of the two 0-15 nodes at random
            try:
                assert openai_stream(network) == expected
            except openai.APIStatusError as exc:
                assert exc.status_code == 503, exc
                refused.append(str(exc))
            if any(DISPUTE_LINE in line for _, line in events):
                break
        disputed_at = next(i for i, (_, line) in enumerate(events) if DISPUTE_LINE in line)
        # With the two 0-15 nodes withdrawn no route is left: unavailable, with the reason.
        for _ in range(3):
            with pytest.raises(openai.APIStatusError) as caught:
                openai_stream(network)
            assert caught.value.status_code == 503
            assert "no third node was there to decide" in str(caught.value)
        model = next(m for m in network.state()["models"] if m["live_nodes"])
        assert model["status"] == "disputed" and "unavailable" in model["detail"]

        # The arbiter: started without --layers, recruited for exactly the disputed range.
        children.append(start_node(4, tmp_path, url, default_model_dir, None, on_line))
        wait_until(
            lambda: any(
                n["node_id"] == liar and n["state"] == "quarantined"
                for n in network.state()["nodes"]
            ),
            400,
            "the arbiter to replay the disputed steps and the liar to be quarantined",
        )
        assert placements["node 4"]["data"]["source"] == "tracker"
        arbiter = registered["node 4"]
        nodes = {n["node_id"]: n for n in network.state()["nodes"]}
        assert (nodes[arbiter]["shard_start"], nodes[arbiter]["shard_end"]) == (0, 15)
        evidence = nodes[liar]["quarantine_evidence"]
        assert evidence["accused"] == liar and evidence["arbiter"] == arbiter
        assert set(evidence["majority"]) == {honest, arbiter}
        assert evidence["accused_bound_by_receipt"]
        assert nodes[honest]["state"] == "active"

        # The honest node serves again: with the arbiter gone, only it holds 0-15.
        children[-1].stop()
        wait_until(
            lambda: (
                not any(n["node_id"] == arbiter and n["live"] for n in network.state()["nodes"])
            ),
            120,
            "the arbiter to leave",
        )
        for _ in range(2):
            assert openai_stream(network) == expected
        answers = [
            (i, m.group("route"), int(m.group(2)))
            for i, (name, line) in enumerate(events)
            if name == "tracker" and (m := ANSWERED.search(line))
        ]
        assert any(honest[:8] in route for i, route, _ in answers if i > disputed_at)
        # The figure: chats (and tokens) answered through the liar after the first dispute.
        through_liar = [(r, n) for i, r, n in answers if i > disputed_at and liar[:8] in r]
        print(
            f"after the first dispute: {len(through_liar)} chats, "
            f"{sum(n for _, n in through_liar)} tokens answered through the liar; "
            f"{len(refused)} chat(s) refused before it was settled"
        )
        assert through_liar == []
    finally:
        restore_environment()
        for child in reversed(children):
            child.stop()
