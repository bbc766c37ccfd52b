"""A headless node serves until it is signalled, whatever its stdin does.

As an operator would script it: a Python launcher starts three ``meshnet-node
run`` processes against a real tracker on loopback, with the real default
model. Two inherit the launcher's own stdin, a pipe the test closes at once
(a process supervisor or ``Popen`` whose pipe reaches its end); the third gets
stdin on /dev/null. Without ``--control stdin`` none of that is a stop: all
three reach serving, stay listed live, and stop cleanly on SIGTERM.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest

from tests.support.node_child import node_run_argv
from tests.tracker_service.server_process import TrackerProcess

REPO = Path(__file__).resolve().parents[2]
RANGES = ("0:10", "10:20", "20:30")

LAUNCHER = textwrap.dedent(
    """
    import json, subprocess, sys

    spec = json.loads(sys.argv[1])
    pids = []
    for node in spec["nodes"]:
        log = open(node["log"], "w")
        # Only the last node is given stdin explicitly; the others inherit ours.
        stdin = subprocess.DEVNULL if node["devnull"] else None
        child = subprocess.Popen(
            node["argv"], stdin=stdin, stdout=log, stderr=subprocess.STDOUT, env=node["env"]
        )
        pids.append(child.pid)
    print(json.dumps(pids), flush=True)
    """
)


def _events(log: Path) -> list[dict[str, object]]:
    events = []
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
    return events


def _node_argv(tracker: TrackerProcess, model_dir: Path, home: Path, layers: str) -> list[str]:
    return node_run_argv(tracker.url, model_dir, home, "--layers", layers)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by the gone launcher) counts as gone.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ", 1)[1].startswith("Z"))


@pytest.mark.slow
def test_three_nodes_from_a_launcher_whose_stdin_ended_all_serve(
    tracker: TrackerProcess, default_model_dir: Path, tmp_path: Path
) -> None:
    nodes = []
    for index, layers in enumerate(RANGES):
        home = tmp_path / f"node{index}"
        home.mkdir()
        env = dict(os.environ, MESHNET_HOME=str(home), PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1")
        nodes.append(
            {
                "argv": _node_argv(tracker, default_model_dir, home, layers),
                "env": env,
                "log": str(home / "node.log"),
                "devnull": index == len(RANGES) - 1,
            }
        )
    launcher = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER, json.dumps({"nodes": nodes})],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert launcher.stdin is not None and launcher.stdout is not None
    launcher.stdin.close()  # the pipe the first two nodes inherited has ended
    pids: list[int] = json.loads(launcher.stdout.readline())
    assert launcher.wait(30) == 0
    logs = [Path(str(node["log"])) for node in nodes]
    try:
        deadline = time.monotonic() + 600
        serving: set[int] = set()
        while len(serving) < len(pids) and time.monotonic() < deadline:
            for index, log in enumerate(logs):
                states = [e.get("state") for e in _events(log) if e.get("kind") == "state"]
                assert "stopped" not in states, f"node {index} stopped:\n{log.read_text()}"
                assert _alive(pids[index]), f"node {index} exited:\n{log.read_text()}"
                if "serving" in states:
                    serving.add(index)
            time.sleep(0.5)
        assert serving == set(range(len(pids))), [log.read_text()[-2000:] for log in logs]
        live = [n for n in httpx.get(f"{tracker.url}/api/v1/state").json()["nodes"] if n["live"]]
        assert len(live) == len(pids)
        # A few heartbeats later every node still serves: nothing stopped it.
        time.sleep(3.0)
        assert all(_alive(pid) for pid in pids)
        for log in logs:
            states = [e.get("state") for e in _events(log) if e.get("kind") == "state"]
            assert states[-1] == "serving" and "stopped" not in states
    finally:
        for pid in pids:
            if _alive(pid):
                os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 90
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    leftover = [pid for pid in pids if _alive(pid)]
    for pid in leftover:
        os.kill(pid, signal.SIGKILL)
    assert not leftover, "a node ignored SIGTERM"
    for log in logs:  # the signal is a stop, and the stop is clean
        states = [e.get("state") for e in _events(log) if e.get("kind") == "state"]
        assert states[-1] == "stopped", log.read_text()[-2000:]
