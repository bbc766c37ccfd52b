"""NodeController over a real child process: a fake node speaking the protocol."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject, Signal

from app.node_command import (
    NODE_EXECUTABLE_ENV,
    child_environment,
    node_doctor_argv,
    node_hardware_argv,
    node_run_argv,
)
from app.settings_model import AppSettings
from app.ui.controller import NodeController, crash_sentence

# A stand-in for `meshnet-node run --events json`: prints protocol lines and
# obeys stdin commands, so the controller is driven by a real process.
FAKE_NODE = r"""
import json, sys, time

mode = sys.argv[1] if len(sys.argv) > 1 else "serve"
state = {"state": "loading", "tokens": 0}

def emit(kind, message="", state=None, gate=None, gate_state=None, reason=None, data=None):
    print(json.dumps({"kind": kind, "message": message, "state": state, "gate": gate,
        "gate_state": gate_state, "reason": reason, "data": data or {}, "at": time.time()}),
        flush=True)

def set_state(name, message, reason=None):
    state["state"] = name
    emit("state", message, state=name, reason=reason)

def snapshot():
    emit("snapshot", data={"state": state["state"], "message": "fake", "reason": None,
        "gates": {}, "report": None, "registration": None, "open_sessions": 0,
        "tokens_served": state["tokens"], "started_at": None, "uptime_s": 0,
        "pid": 1, "settings": {"tracker_url": "http://t", "model": None, "layers": [0, 15],
        "device": "cpu", "memory_cap_mb": None}})

def serve():
    set_state("loading", "Loading layers 0–15…")
    emit("gate", "Identity ready", gate="identity", gate_state="passed")
    emit("gate", "Report passed", gate="capability", gate_state="passed",
         data={"report": {"validated_at": time.time(), "shard": {"start": 0, "end": 15}}})
    emit("gate", "Registered", gate="registration", gate_state="passed",
         data={"node_id": "n1", "shard": [0, 15], "recipe_id": "r1", "model_id": "m"})
    emit("gate", "Recipe is dark", gate="recipe", gate_state="info",
         data={"status": "dark", "detail": "waiting"})
    set_state("serving", "Serving layers 0–15")
    state["tokens"] += 5
    emit("stats", data={"open_sessions": 1, "tokens_served": state["tokens"], "uptime_s": 1})

snapshot()
print("INFO core.node: fake node starting", file=sys.stderr, flush=True)
if mode == "refuse":
    set_state("refused", "Not enough memory for layers 0–15: choose fewer layers.",
              reason="out-of-memory")
    sys.exit(2)
if mode == "crash":
    print("Traceback (most recent call last): boom", file=sys.stderr, flush=True)
    sys.exit(3)
serve()
if mode == "certify":
    emit("gate", "Recipe certified", gate="recipe", gate_state="passed",
         data={"status": "certified", "detail": "2 nodes"})
for line in sys.stdin:
    command = line.strip()
    if command.startswith("{"):
        command = json.loads(command)["command"]
    if mode == "ignore-stop":
        continue
    if command == "stop":
        break
    if command == "pause":
        set_state("pausing", "Pausing")
        set_state("paused", "Paused by request")
    elif command == "resume":
        serve()
    elif command == "snapshot":
        snapshot()
if mode == "ignore-stop":
    time.sleep(600)
set_state("draining", "Draining")
set_state("stopped", "Stopped")
sys.exit(0)
"""


def write_fake_node(folder: Path) -> Path:
    path = folder / "fake_node.py"
    path.write_text(FAKE_NODE, encoding="utf-8")
    return path


_live: list[NodeController] = []


@pytest.fixture(autouse=True)
def _kill_children() -> Any:
    yield
    while _live:
        controller = _live.pop()
        controller.kill()
        controller.wait_for_exit(5000)


def fake_controller(
    qtbot: Any, tmp_path: Path, mode: str = "serve", **kwargs: Any
) -> NodeController:
    script = write_fake_node(tmp_path)
    argvs: list[str | None] = []

    def argv(report_path: str | None) -> list[str]:
        argvs.append(report_path)
        return [sys.executable, str(script), mode]

    controller = NodeController(argv_factory=argv, **kwargs)
    controller.argvs = argvs  # type: ignore[attr-defined]
    _live.append(controller)
    return controller


class Usage:
    """Records what the controller hands app.usage_history.UsageHistory."""

    def __init__(self) -> None:
        self.records: list[tuple[float, int, str]] = []
        self.saves = 0

    def record(self, now: float, tokens_served_total: int, run_id: str) -> int:
        self.records.append((now, tokens_served_total, run_id))
        return tokens_served_total

    def save(self) -> None:
        self.saves += 1


def test_start_reaches_serving_and_fills_gates_and_usage(qtbot: Any, tmp_path: Path) -> None:
    usage = Usage()
    controller = fake_controller(qtbot, tmp_path, usage=usage)
    notes: list[tuple[str, str]] = []
    controller.notify.connect(lambda title, text: notes.append((title, text)))
    with qtbot.waitSignal(controller.running_changed, timeout=5000):
        controller.start("/tmp/report.json")
    assert controller.argvs == ["/tmp/report.json"]  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: controller.status.state == "serving", timeout=15000)
    status = controller.status
    assert status.gates["registration"].gate_state == "passed"
    assert status.shard == (0, 15)
    qtbot.waitUntil(lambda: bool(usage.records), timeout=5000)
    assert usage.records[0][1] == 5
    assert ("Contributing", "This computer is helping the network answer questions.") in notes
    qtbot.waitUntil(lambda: any("fake node starting" in line for line in status.log_lines))
    with qtbot.waitSignal(controller.running_changed, timeout=15000) as blocker:
        controller.stop()
    assert blocker.args == [False]
    assert controller.status.state == "stopped"
    assert usage.saves >= 1
    assert not controller.running


def test_pause_and_resume_are_stdin_commands(qtbot: Any, tmp_path: Path) -> None:
    controller = fake_controller(qtbot, tmp_path)
    notes: list[tuple[str, str]] = []
    controller.notify.connect(lambda title, text: notes.append((title, text)))
    controller.start()
    qtbot.waitUntil(lambda: controller.status.state == "serving", timeout=15000)
    assert controller.pause("Paused: game.exe is running")
    qtbot.waitUntil(lambda: controller.status.state == "paused", timeout=10000)
    assert controller.status.message == "Paused: game.exe is running"
    assert ("Contribution paused", "Paused: game.exe is running") in notes
    assert controller.resume()
    qtbot.waitUntil(lambda: controller.status.state == "serving", timeout=10000)
    assert notes[-1][0] == "Contributing again"
    with qtbot.waitSignal(controller.running_changed, timeout=15000):
        controller.stop()


def test_snapshot_command_replaces_the_model(qtbot: Any, tmp_path: Path) -> None:
    controller = fake_controller(qtbot, tmp_path)
    controller.start()
    qtbot.waitUntil(lambda: controller.status.state == "serving", timeout=15000)
    with qtbot.waitSignal(controller.gate_changed, timeout=10000):
        assert controller.request_snapshot()
    qtbot.waitUntil(lambda: controller.status.gates["registration"].gate_state == "waiting")
    assert controller.status.settings["device"] == "cpu"
    with qtbot.waitSignal(controller.running_changed, timeout=15000):
        controller.stop()


def test_refused_child_becomes_its_own_sentence(qtbot: Any, tmp_path: Path) -> None:
    controller = fake_controller(qtbot, tmp_path, mode="refuse")
    with qtbot.waitSignal(controller.crashed, timeout=15000) as blocker:
        controller.start()
    assert blocker.args == ["Not enough memory for layers 0–15: choose fewer layers."]
    assert controller.status.state == "refused"
    assert controller.status.reason == "out-of-memory"
    assert not controller.running


def test_crashed_child_gives_exit_code_sentence_and_retry_starts_again(
    qtbot: Any, tmp_path: Path
) -> None:
    controller = fake_controller(qtbot, tmp_path, mode="crash")
    with qtbot.waitSignal(controller.crashed, timeout=15000) as blocker:
        controller.start()
    assert blocker.args == [
        "The node stopped unexpectedly (exit code 3). Retry, or run the doctor."
    ]
    assert controller.status.state == "error"
    assert any("Traceback" in line for line in controller.status.log_lines)
    with qtbot.waitSignal(controller.crashed, timeout=15000):
        controller.retry()
    assert len(controller.argvs) == 2  # type: ignore[attr-defined]


def test_stop_kills_a_child_that_ignores_it_after_the_timeout(qtbot: Any, tmp_path: Path) -> None:
    controller = fake_controller(qtbot, tmp_path, mode="ignore-stop", stop_timeout_s=1.0)
    controller.start()
    qtbot.waitUntil(lambda: controller.status.state == "serving", timeout=15000)
    crashes: list[str] = []
    controller.crashed.connect(crashes.append)
    with qtbot.waitSignal(controller.running_changed, timeout=15000):
        controller.stop()
    assert controller.status.state == "stopped"
    assert crashes == []
    assert any("did not stop in time" in line for line in controller.status.log_lines)


def test_certified_recipe_is_notified(qtbot: Any, tmp_path: Path) -> None:
    controller = fake_controller(qtbot, tmp_path, mode="certify")
    notes: list[str] = []
    controller.notify.connect(lambda title, text: notes.append(title))
    controller.start()
    qtbot.waitUntil(lambda: "Ready to answer" in notes, timeout=15000)
    with qtbot.waitSignal(controller.running_changed, timeout=15000):
        controller.stop()


def test_missing_executable_is_a_sentence_not_an_exception(qtbot: Any) -> None:
    controller = NodeController(argv_factory=lambda _r: ["/nonexistent/meshnet-node", "run"])
    with qtbot.waitSignal(controller.crashed, timeout=10000) as blocker:
        controller.start()
    assert "stopped unexpectedly" in blocker.args[0]
    assert not controller.running


def test_crash_sentence_prefers_the_last_failed_state() -> None:
    state = {"state": "error", "message": "The tracker is unreachable.", "reason": "tracker-down"}
    assert crash_sentence(2, state) == ("error", "The tracker is unreachable.", "tracker-down")
    assert crash_sentence(1, {"state": "serving", "message": "x"})[1].startswith(
        "The node stopped unexpectedly (exit code 1)"
    )


def test_commands_without_a_child_do_nothing(qtbot: Any) -> None:
    controller = NodeController(argv_factory=lambda _r: ["true"])
    assert controller.pause("x") is False
    assert controller.resume() is False
    assert controller.request_snapshot() is False
    controller.stop()
    assert controller.status.state == "stopped"


@pytest.mark.parametrize("code", [0, 1])
def test_unrequested_exit_is_a_crash(qtbot: Any, tmp_path: Path, code: int) -> None:
    script = tmp_path / "exit.py"
    script.write_text(f"import sys; sys.exit({code})\n")
    controller = NodeController(argv_factory=lambda _r: [sys.executable, str(script)])
    with qtbot.waitSignal(controller.crashed, timeout=10000) as blocker:
        controller.start()
    assert f"exit code {code}" in blocker.args[0]


def test_node_argv_from_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    # where the key lives is the keyring's business here (tests/app/ui/test_no_keyring.py)
    monkeypatch.setattr("app.node_command.identity_flags", lambda: [])
    settings = AppSettings(
        tracker_url="http://tracker:8765",
        model="org/model",
        layers=(0, 15),
        device="cuda:0",
        memory_cap_mb=4096,
    )
    argv = node_run_argv(settings, report_path="/r/report.json", frozen=False)
    assert argv == [
        sys.executable,
        "-m",
        "app.cli.node",
        "run",
        "--tracker",
        "http://tracker:8765",
        "--events",
        "json",
        "--control",
        "stdin",
        "--model",
        "org/model",
        "--layers",
        "0:15",
        "--device",
        "cuda:0",
        "--memory-cap-mb",
        "4096",
        "--report",
        "/r/report.json",
    ]
    plain = node_run_argv(AppSettings(tracker_url="http://t"), frozen=False)
    assert plain[3:] == ["run", "--tracker", "http://t", "--events", "json", "--control", "stdin"]
    doctor = node_doctor_argv(settings, frozen=False)
    assert doctor[3:8] == ["doctor", "--json", "--control", "stdin", "--model"]
    assert "--layers" not in node_hardware_argv(settings, frozen=False)


def test_frozen_bundle_runs_the_bundled_node(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.delenv(NODE_EXECUTABLE_ENV, raising=False)
    argv = node_run_argv(AppSettings(tracker_url="http://t"))
    assert Path(argv[0]).name in ("meshnet-node", "meshnet-node.exe")
    assert Path(argv[0]).parent == Path(sys.executable).resolve().parent
    assert argv[1:3] == ["run", "--tracker"]
    monkeypatch.setenv(NODE_EXECUTABLE_ENV, "/opt/meshnet/node")
    assert node_run_argv(AppSettings())[0] == "/opt/meshnet/node"


def test_child_environment_finds_the_app_package() -> None:
    env = child_environment({"PYTHONPATH": "/elsewhere"})
    root = str(Path(__file__).resolve().parents[3])
    assert env["PYTHONPATH"].split(os.pathsep) == [root, "/elsewhere"]
    assert env["PYTHONUNBUFFERED"] == "1"


class Store(QObject):
    changed = Signal(object)

    def __init__(self, settings: AppSettings) -> None:
        super().__init__()
        self.settings = settings

    def load(self) -> AppSettings:
        return self.settings

    def save(self, settings: AppSettings) -> None:
        self.settings = settings
        self.changed.emit(settings)


def test_changed_node_settings_restart_a_running_node(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = write_fake_node(tmp_path)
    started: list[list[str]] = []

    def fake_argv(settings: AppSettings, *, report_path: str | None = None) -> list[str]:
        argv = [sys.executable, str(script), "serve", f"--layers={settings.layers}"]
        started.append(argv)
        return argv

    monkeypatch.setattr("app.ui.controller.node_run_argv", fake_argv)
    store = Store(AppSettings(layers=(0, 15)))
    controller = NodeController(store)
    _live.append(controller)
    controller.start()
    qtbot.waitUntil(lambda: controller.status.state == "serving", timeout=15000)
    store.save(replace(store.settings, pause_on_battery=False))  # not a node flag
    assert not controller.stopping
    store.save(replace(store.settings, layers=(0, 8)))
    qtbot.waitUntil(lambda: started[-1][-1] == "--layers=(0, 8)", timeout=15000)
    qtbot.waitUntil(lambda: controller.status.state == "serving", timeout=15000)
    assert controller.running
