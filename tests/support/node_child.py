"""A `meshnet-node run --events json --control stdin` child, spoken to through its pipes.

The app runs its node this way (app/ui/node_process.py): one JSON event a line on
stdout, commands (``stop``, ``pause``, ``resume``, ``snapshot``) on stdin. Tests of
the protocol and of a node that pauses with sessions open use it.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
EVENT_FIELDS = {"kind", "message", "state", "gate", "gate_state", "reason", "data", "at"}


def node_run_argv(tracker_url: str, model_dir: Path, home: Path, *extra: str) -> list[str]:
    """`meshnet-node run` on the CPU with its key file in ``home``, saying JSON events."""
    return [
        sys.executable, "-m", "app.cli.node", "run",
        "--tracker", tracker_url,
        "--model", str(model_dir),
        "--identity-file", str(home / "identity.key"),
        "--device", "cpu",
        "--events", "json",
        *extra,
    ]  # fmt: skip


class NodeChild:
    """One `meshnet-node run --events json` child with stdin, stdout and stderr pipes."""

    def __init__(
        self,
        home: Path,
        tracker_url: str,
        model_dir: Path,
        *extra: str,
        env: Mapping[str, str] | None = None,
        log_path: Path | None = None,
    ) -> None:
        """``log_path``: the child's log (stderr) goes to that file, not to ``stderr``."""
        env = dict(os.environ, MESHNET_HOME=str(home), PYTHONUNBUFFERED="1", **(env or {}))
        argv = node_run_argv(tracker_url, model_dir, home, "--control", "stdin", *extra)
        self.process = subprocess.Popen(
            argv,
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if log_path is None else log_path.open("ab"),
            text=True,
            bufsize=1,
        )
        self.events: list[dict[str, Any]] = []
        self.stdout_lines: list[str] = []
        self._new: queue.Queue[dict[str, Any]] = queue.Queue()
        self.stderr = ""
        threading.Thread(target=self._read_stdout, daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.stdout_lines.append(line)
            event = json.loads(line)  # every stdout line is one JSON event
            self.events.append(event)
            self._new.put(event)

    def _read_stderr(self) -> None:
        if self.process.stderr is not None:
            self.stderr = self.process.stderr.read()

    def send(self, command: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()

    def wait_event(
        self, predicate: Callable[[dict[str, Any]], bool], timeout_s: float = 240.0
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                event = self._new.get(timeout=0.5)
            except queue.Empty:
                if self.process.poll() is not None and self._new.empty():
                    break
                continue
            if predicate(event):
                return event
        raise AssertionError(f"no such event; got {self.events[-5:]}\nstderr: {self.stderr}")

    def wait_state(self, state: str, timeout_s: float = 240.0) -> dict[str, Any]:
        return self.wait_event(lambda e: e["kind"] == "state" and e["state"] == state, timeout_s)

    def exit_code(self, timeout_s: float = 60.0) -> int:
        code = self.process.wait(timeout_s)
        self._stderr_reader.join(10)
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
