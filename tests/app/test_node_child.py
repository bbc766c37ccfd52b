"""`meshnet-node run --events json` as the app runs it: a real child process on the real
default model against a real tracker on loopback, spoken to through its pipes.

Also the fast parts of the protocol (command parsing, which stdin counts as a
pipe, the stop signals of each OS) and the `hardware` / `models` JSON commands.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.cli.node_control import (
    STDIN_ENDED,
    STDIN_ENDED_WHY,
    CommandQueue,
    EventPrinter,
    parse_command,
    stop_signals,
)
from core.errors import Cancelled
from core.events import Gate, GateState, NodeEvent, NodeState
from core.progress import CancelToken
from tests.support.node_child import EVENT_FIELDS, NodeChild, node_run_argv
from tests.tracker_service.server_process import TrackerProcess

REPO = Path(__file__).resolve().parents[2]


def _listed(tracker: TrackerProcess, node_id: str) -> dict[str, Any] | None:
    response = httpx.get(f"{tracker.url}/api/v1/nodes/{node_id}", timeout=5)
    return None if response.status_code == 404 else dict(response.json())


def _wait_listed_live(tracker: TrackerProcess, node_id: str, live: bool) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        view = _listed(tracker, node_id)
        if view is not None and view["live"] is live:
            return
        time.sleep(0.2)
    raise AssertionError(f"node {node_id} never became live={live}: {_listed(tracker, node_id)}")


@pytest.mark.slow
def test_the_child_speaks_the_protocol_pauses_resumes_and_stops(
    tracker: TrackerProcess, default_model_dir: Path, tmp_path: Path
) -> None:
    child = NodeChild(tmp_path / "node", tracker.url, default_model_dir, "--layers", "0:30")
    try:
        first = child.wait_event(lambda _e: True, timeout_s=60)
        assert first["kind"] == "snapshot" and set(first) == EVENT_FIELDS
        assert first["data"]["state"] == "stopped" and first["data"]["pid"] == child.process.pid
        assert first["data"]["settings"]["layers"] == [0, 30]

        child.wait_state("serving")
        gates = [e for e in child.events if e["kind"] == "gate"]
        assert [g["gate"] for g in gates[:5]] == [
            "identity",
            "capability",
            "admission",
            "data-plane",
            "registration",
        ]
        assert all(g["gate_state"] == "passed" for g in gates[:5])
        report = gates[1]["data"]["report"]
        assert report["passed"] is True and report["shard"] == {"start": 0, "end": 30}
        registration = gates[4]["data"]
        assert registration["shard"] == [0, 30] and registration["tracker_url"] == tracker.url
        assert registration["endpoint"].startswith("wss://127.0.0.1:")  # TLS by default
        node_id = registration["node_id"]
        progress = [e for e in child.events if e["kind"] == "progress"]
        assert {"load", "probe"} <= {p["data"]["stage"] for p in progress}
        assert all(set(e) == EVENT_FIELDS for e in child.events)
        _wait_listed_live(tracker, node_id, True)

        child.send("snapshot")
        snapshot = child.wait_event(lambda e: e["kind"] == "snapshot")
        assert snapshot["data"]["state"] == "serving"
        assert snapshot["data"]["registration"]["node_id"] == node_id
        assert snapshot["data"]["gates"]["capability"]["data"]["report"] == report
        assert snapshot["data"]["started_at"] is not None

        # The reachability and recipe gates come from the heartbeat reply.
        child.wait_event(lambda e: e["kind"] == "gate" and e["gate"] == "reachability")

        child.send("pause")
        child.wait_state("paused")
        _wait_listed_live(tracker, node_id, False)

        child.send('{"command": "resume"}')
        child.wait_state("serving")
        _wait_listed_live(tracker, node_id, True)
        capability = [e for e in child.events if e["kind"] == "gate" and e["gate"] == "capability"]
        assert capability[-1]["data"]["report"]["validated_at"] > report["validated_at"]

        child.send("stop")
        assert child.exit_code() == 0, child.stderr
        assert child.events[-1]["state"] == "stopped"
        _wait_listed_live(tracker, node_id, False)
        assert "Traceback" not in child.stderr
    finally:
        child.kill()


@pytest.mark.slow
def test_closing_stdin_stops_the_node_and_it_leaves_the_network(
    tracker: TrackerProcess, default_model_dir: Path, tmp_path: Path
) -> None:
    child = NodeChild(tmp_path / "node", tracker.url, default_model_dir, "--layers", "0:8")
    try:
        child.wait_state("serving")
        node_id = next(e for e in child.events if e["gate"] == "registration")["data"]["node_id"]
        assert child.process.stdin is not None
        child.process.stdin.close()  # what a killed app leaves behind
        assert child.exit_code() == 0, child.stderr
        assert _listed(tracker, node_id)["live"] is False  # type: ignore[index]
        stopped = child.events[-1]  # the stop says why: the controlling stdin ended
        assert stopped["state"] == "stopped" and stopped["reason"] == "stdin-closed"
        assert "stdin ended" in stopped["message"] and "--control stdin" in stopped["message"]
    finally:
        child.kill()


@pytest.mark.slow
def test_layers_past_the_model_are_refused_with_a_reason_and_exit_2(
    tracker: TrackerProcess, default_model_dir: Path, tmp_path: Path
) -> None:
    child = NodeChild(tmp_path / "node", tracker.url, default_model_dir, "--layers", "0:99")
    try:
        assert child.exit_code() == 2
        refused = child.events[-1]
        assert refused["kind"] == "state" and refused["state"] == "refused"
        assert refused["reason"] == "bad-layers"
        assert refused["message"].startswith("This model has 30 layers, so layers 0–99")
        assert "Traceback" not in child.stderr
        assert httpx.get(tracker.url + "/api/v1/state").json()["nodes"] == []
    finally:
        child.kill()


@pytest.mark.slow
def test_sigterm_stops_the_child_cleanly(
    tracker: TrackerProcess, default_model_dir: Path, tmp_path: Path
) -> None:
    child = NodeChild(tmp_path / "node", tracker.url, default_model_dir, "--layers", "22:30")
    try:
        child.wait_state("serving")
        child.process.send_signal(signal.SIGTERM)
        assert child.exit_code() == 0, child.stderr
        assert child.events[-1]["state"] == "stopped"
    finally:
        child.kill()


@pytest.mark.slow
def test_a_stdin_on_dev_null_does_not_stop_the_node(
    tracker: TrackerProcess, default_model_dir: Path, tmp_path: Path
) -> None:
    """The demo starts its nodes with stdin on /dev/null: that is not an end of a pipe."""
    home = tmp_path / "node"
    argv = node_run_argv(tracker.url, default_model_dir, home, "--layers", "0:4")
    env = dict(os.environ, MESHNET_HOME=str(home))
    process = subprocess.Popen(
        argv, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if json.loads(line).get("state") == "serving":
                break
        time.sleep(2.0)
        assert process.poll() is None  # still serving
        process.send_signal(signal.SIGTERM)
        assert process.wait(60) == 0
    finally:
        if process.poll() is None:
            process.kill()


# -- fast: the protocol's pieces ------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("stop\n", "stop"),
        ("  PAUSE ", "pause"),
        ('{"command": "resume"}', "resume"),
        ('{"command": "snapshot"}\n', "snapshot"),
        ("dance", None),
        ('{"cmd": "stop"}', None),
        ("{broken", None),
        ("", None),
    ],
)
def test_commands_are_plain_words_or_json(line: str, command: str | None) -> None:
    assert parse_command(line) == command


def test_the_end_of_a_controlling_stdin_is_a_stop_that_says_why() -> None:
    commands = CommandQueue()
    commands.read_stdin(io.StringIO("snapshot\n")).join(5)
    assert [commands.get(1.0), commands.get(1.0)] == ["snapshot", STDIN_ENDED]
    token = CancelToken()
    token.cancel(STDIN_ENDED_WHY)
    with pytest.raises(Cancelled, match="stopped while importing: stdin ended"):
        token.check("importing")


def test_stop_signals_per_platform(monkeypatch: pytest.MonkeyPatch) -> None:
    assert stop_signals("linux") == [signal.SIGTERM, signal.SIGINT]
    assert stop_signals("darwin") == [signal.SIGTERM, signal.SIGINT]
    monkeypatch.setattr(signal, "SIGBREAK", 21, raising=False)  # what Windows has
    assert stop_signals("win32") == [signal.SIGTERM, signal.SIGINT, 21]


def test_the_printer_writes_every_field_of_every_event_on_one_line() -> None:
    out = io.StringIO()
    printer = EventPrinter("json", out)
    printer(
        NodeEvent(
            "gate",
            "recipe is certified: ok",
            gate=Gate.RECIPE,
            gate_state=GateState.PASSED,
            reason="certified",
            data={"status": "certified", "detail": "ok"},
            at=12.5,
        )
    )
    printer(NodeEvent("state", "paused", state=NodeState.PAUSED, at=13.0))
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first == {
        "kind": "gate",
        "message": "recipe is certified: ok",
        "state": None,
        "gate": "recipe",
        "gate_state": "passed",
        "reason": "certified",
        "data": {"status": "certified", "detail": "ok"},
        "at": 12.5,
    }
    assert second["state"] == "paused" and second["data"] == {}


def test_the_text_printer_keeps_the_human_form() -> None:
    out = io.StringIO()
    printer = EventPrinter("text", out)
    printer(NodeEvent("state", "serving", state=NodeState.SERVING))
    printer(NodeEvent("gate", "listening", gate=Gate.DATA_PLANE, gate_state=GateState.PASSED))
    printer(NodeEvent("snapshot", "s", data={}))
    assert out.getvalue().splitlines() == ["[serving] serving", "  data-plane: passed — listening"]


def _run_cli(*argv: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, MESHNET_HOME=str(home))
    return subprocess.run(
        [sys.executable, "-m", "app.cli.node", *argv],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )


def test_hardware_json_suggests_layers_before_any_import(tmp_path: Path) -> None:
    done = _run_cli(
        "hardware", "--json", "--device", "cpu", "--memory-cap-mb", "4096", home=tmp_path
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert set(report) == {
        "device",
        "ram_total_bytes",
        "ram_available_bytes",
        "disk_free_bytes",
        "cpu_count",
        "model",
        "suggested_layers",
        "suggestion",
        "room_layers",
        "recipe_id",
    }
    assert report["room_layers"] == 30 and report["recipe_id"]
    assert set(report["device"]) == {"kind", "name", "total_bytes", "free_bytes"}
    assert report["device"]["free_bytes"] <= 4096 * 1024**2
    assert report["model"]["imported"] is False and report["suggested_layers"] == [0, 30]
    assert not (tmp_path / "models" / "smollm2-135m-instruct").exists()


@pytest.mark.slow
def test_import_default_json_reports_progress_and_the_folder(tmp_path: Path) -> None:
    done = _run_cli("models", "import-default", "--json", home=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["model_id"] == "smollm2-135m-instruct"
    assert Path(result["path"], "meshnet-manifest.json").is_file()
    progress = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    assert all(p["kind"] == "progress" and p["data"]["stage"] == "import" for p in progress)
    counts = [p["data"]["done"] for p in progress]
    assert (
        counts == sorted(counts) and progress[-1]["data"]["done"] == progress[-1]["data"]["total"]
    )


@pytest.mark.slow
def test_the_wizards_report_is_reused_by_run_without_a_second_test_forward(
    tracker: TrackerProcess, default_model_dir: Path, tmp_path: Path
) -> None:
    home = tmp_path / "node"
    doctor = _run_cli(
        "doctor", "--model", str(default_model_dir), "--layers", "0:6", "--device", "cpu",
        "--json", home=home,
    )  # fmt: skip
    assert doctor.returncode == 0, doctor.stderr
    lines = [json.loads(line) for line in doctor.stderr.splitlines() if line.startswith("{")]
    saved = next(line for line in lines if line["kind"] == "report-saved")["data"]["path"]
    report = json.loads(doctor.stdout)
    child = NodeChild(home, tracker.url, default_model_dir, "--layers", "0:6", "--report", saved)
    try:
        child.wait_state("serving")
        stages = {e["data"]["stage"] for e in child.events if e["kind"] == "progress"}
        assert stages == {"load"}  # loaded, but no second test forward
        capability = next(e for e in child.events if e["gate"] == "capability")
        assert capability["data"]["report"] == report
        child.send("stop")
        assert child.exit_code() == 0, child.stderr
    finally:
        child.kill()


@pytest.mark.slow
@pytest.mark.parametrize("how", ["stop-line", "stdin-closed", "sigterm"])
def test_an_import_stopped_midway_leaves_no_folder_behind(tmp_path: Path, how: str) -> None:
    env = dict(os.environ, MESHNET_HOME=str(tmp_path), PYTHONUNBUFFERED="1")
    argv = [sys.executable, "-m", "app.cli.node", "models", "import-default", "--json"]
    child = subprocess.Popen(
        [*argv, "--control", "stdin"],
        cwd=REPO,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stderr is not None
    for line in child.stderr:  # wait until it is really unpacking
        if line.startswith("{") and json.loads(line)["data"].get("done", 0) >= 1:
            break
    if how == "stop-line":
        child.stdin.write("stop\n")
        child.stdin.flush()
    elif how == "stdin-closed":
        child.stdin.close()
    else:
        child.send_signal(signal.SIGTERM)
    rest = child.stderr.read()
    assert child.wait(60) == 2
    assert "[cancelled]" in rest and "Traceback" not in rest
    assert list((tmp_path / "models").iterdir()) == []  # no model, no staging folder


def test_a_killed_imports_staging_folder_is_removed_by_the_next(tmp_path: Path) -> None:
    from core.models.gguf_import import _remove_abandoned_staging

    destination = tmp_path / "smollm2"
    dead = tmp_path / ".smollm2.partial-999999999"  # no such process
    mine = tmp_path / f".smollm2.partial-{os.getpid()}"
    for folder in (dead, mine):
        folder.mkdir()
        (folder / "model.safetensors").write_bytes(b"half")
    _remove_abandoned_staging(destination)
    assert not dead.exists() and not mine.exists()


def test_the_text_printer_shows_a_step_when_it_starts_and_ends_not_per_layer() -> None:
    out = io.StringIO()
    printer = EventPrinter("text", out)
    for stage, message, total in (("load", "Loading layers 0–15…", 15), ("probe", "Checking…", 3)):
        for done in range(total + 1):
            data = {"stage": stage, "done": done, "total": total}
            printer(NodeEvent("progress", message, data=data))
    assert out.getvalue().splitlines() == [
        "  Loading layers 0–15… 0/15",
        "  Loading layers 0–15… 15/15",
        "  Checking… 0/3",
        "  Checking… 3/3",
    ]
    # A step that begins past 0 (a resumed probe) still gets its first line.
    printer(
        NodeEvent(
            "progress", "Loading layers 0–15…", data={"stage": "load", "done": 4, "total": 15}
        )
    )
    assert out.getvalue().splitlines()[-1] == "  Loading layers 0–15… 4/15"
