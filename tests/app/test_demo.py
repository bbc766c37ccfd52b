"""`meshnet demo` end to end: real tracker and node processes, certification, a streamed answer."""

from __future__ import annotations

import io
import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.demo.processes import split_layers
from core.errors import MeshnetError


@pytest.mark.slow
def test_demo_certifies_the_recipe_and_streams_an_answer(default_model_dir: Path) -> None:
    # models_dir() is MESHNET_HOME/models: point it at the cached import.
    env = dict(os.environ, MESHNET_HOME=str(default_model_dir.parent.parent))
    result = subprocess.run(
        [sys.executable, "-m", "app.cli.meshnet", "demo", "--prompt", "Say hello.",
         "--max-tokens", "8"],
        capture_output=True, text=True, timeout=600, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    for gate in ("capability", "admission", "registration"):
        assert out.count(f"✓ {gate}:") == 2, out
    assert "→ dark:" in out and "is certified: certified by route session" in out
    assert "route: " in out and "[0–15) → " in out
    assert "tokens/s decode" in out
    assert "/v1/chat/completions" in out and "curl -N" in out  # how to reach the gateway
    assert "from openai import OpenAI" in out


def test_layers_split_into_contiguous_ranges_that_tile_the_model() -> None:
    assert split_layers(30, 2) == [(0, 15), (15, 30)]
    assert split_layers(30, 3) == [(0, 10), (10, 20), (20, 30)]
    ranges = split_layers(7, 3)
    assert ranges[0][0] == 0 and ranges[-1][1] == 7
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))


def test_too_many_nodes_for_the_layers_is_a_clear_error() -> None:
    with pytest.raises(MeshnetError, match="cannot split 2 layers into 3 nodes"):
        split_layers(2, 3)


def test_an_unknown_recipe_fails_before_the_model_import_or_any_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app.demo import runner
    from core.errors import RecipeError

    def must_not_run(*_args: object, **_kw: object) -> None:
        raise AssertionError("the demo started work before checking --recipe")

    monkeypatch.setattr(runner, "ensure_default_model", must_not_run)
    monkeypatch.setattr(runner, "start_tracker", must_not_run)
    out = io.StringIO()
    with pytest.raises(RecipeError, match="llama-int4"):
        runner.Demo(runner.DemoOptions(recipe="int4"), out=out).run()
    assert out.getvalue() == ""


def test_the_howto_says_the_network_stops_unless_it_serves() -> None:
    from app.demo.runner import gateway_howto

    stopping = gateway_howto("http://127.0.0.1:5", "m", serving=False)
    assert "The network stops now" in stopping and "meshnet demo --serve" in stopping
    serving = gateway_howto("http://127.0.0.1:5", "m", serving=True)
    assert "stops" not in serving and "while the network runs" in serving
    for text in (stopping, serving):
        assert "curl -N http://127.0.0.1:5/v1/chat/completions" in text
        assert 'OpenAI(base_url="http://127.0.0.1:5/v1"' in text


def test_node_events_show_each_step_once_without_heartbeat_counters() -> None:
    from app.demo.runner import Demo, DemoOptions

    out = io.StringIO()
    demo = Demo(DemoOptions(), out=out)
    try:
        dark = {"kind": "gate", "gate": "recipe", "gate_state": "info", "message": "dark"}
        for line in (
            dark,
            {"kind": "gate", "gate": "reachability", "gate_state": "passed", "message": "4 ms"},
            dark,  # the heartbeat reply tells it again
            {"kind": "gate", "gate": "sessions", "gate_state": "info", "message": "0 open"},
            {"kind": "gate", "gate": "recipe", "gate_state": "passed", "message": "certified"},
        ):
            demo._on_line("node 1", line)
        demo._on_line("node 2", dark)  # another node's same step is its own line
    finally:
        demo.stop()
    assert out.getvalue().splitlines() == [
        "  node 1  · recipe: dark",
        "  node 1  ✓ reachability: 4 ms",
        "  node 1  ✓ recipe: certified",
        "  node 2  · recipe: dark",
    ]


def test_certification_is_said_once_as_the_steps_result(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.demo.runner import Demo, DemoOptions

    dark = {"recipe_id": "llama-fp32", "status": "dark", "detail": "registered"}
    done = {"recipe_id": "llama-fp32", "status": "certified", "detail": "by rs-1"}
    answers = iter([{"recipes": [dark]}, {"recipes": [dark]}, {"recipes": [done]}])
    out = io.StringIO()
    demo = Demo(DemoOptions(), out=out)
    monkeypatch.setattr(demo, "_state", lambda _url: next(answers))
    monkeypatch.setattr("app.demo.runner.time.sleep", lambda _s: None)
    try:
        recipe = demo._wait_for_certification("http://tracker.test", {})
    finally:
        demo.stop()
    assert recipe["status"] == "certified"
    assert out.getvalue().splitlines() == ["   recipe llama-fp32 → dark: registered"]


def test_a_recipe_certified_before_the_first_look_is_still_said_to_have_been_dark(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app.demo.runner import Demo, DemoOptions

    done = {
        "recipe_id": "llama-fp32",
        "status": "certified",
        "detail": "by rs-1",
        "first_seen_at": 100.0,
        "certified_at": 101.25,
    }
    out = io.StringIO()
    demo = Demo(DemoOptions(), out=out)
    monkeypatch.setattr(demo, "_state", lambda _url: {"recipes": [done]})
    try:
        recipe = demo._wait_for_certification("http://tracker.test", {})
    finally:
        demo.stop()
    assert recipe["status"] == "certified"
    assert out.getvalue().splitlines() == [
        "   recipe llama-fp32 → dark: for 1.2 s after its first node registered, "
        "until a real distributed forward certified it"
    ]
