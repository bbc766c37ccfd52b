"""Real `meshnet-tracker` and `meshnet-node jobs run` processes for the batch-job proof."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.tracker_service.server_process import REPO, TrackerProcess


def tracker_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tracker_service.cli", *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@dataclass
class JobsCli:
    tracker: TrackerProcess
    token: str

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return tracker_cli(*args, "--tracker", self.tracker.url, "--token", self.token)

    def submit(self, *args: str) -> str:
        done = self.run("jobs", "submit", *args, "--json")
        assert done.returncode == 0, done.stderr
        job_id: str = json.loads(done.stdout)["job_id"]
        return job_id

    def show(self, job_id: str) -> dict[str, Any]:
        done = self.run("jobs", "show", job_id, "--json")
        assert done.returncode == 0, done.stderr
        shown: dict[str, Any] = json.loads(done.stdout)
        return shown

    def wait(self, job_id: str, predicate: Any, timeout_s: float = 120.0) -> dict[str, Any]:
        """Poll over HTTP (a CLI process per poll would be too slow to catch a step)."""
        deadline = time.monotonic() + timeout_s
        headers = {"Authorization": f"Bearer {self.token}"}
        while True:
            response = httpx.get(f"{self.tracker.url}/api/v1/jobs/{job_id}", headers=headers)
            shown: dict[str, Any] = response.json()
            if predicate(shown):
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"job {job_id} never reached the condition: {shown}")
            time.sleep(0.1)


class ExecutorProcess:
    """`python -m app.cli.node jobs run` with its own key, credentials file and work folder."""

    def __init__(self, root: Path, name: str, tracker_url: str, *args: str, **env: str) -> None:
        self.root = root / name
        self.root.mkdir(parents=True, exist_ok=True)
        self.log = self.root / "executor.log"
        command = [
            sys.executable, "-m", "app.cli.node", "jobs", "run",
            "--tracker", tracker_url,
            "--identity-file", str(self.root / "node.key"),
            "--credentials-file", str(self.root / "credentials.json"),
            "--workdir", str(self.root / "work"),
            "--poll", "0.2",
            *args,
        ]  # fmt: skip
        full_env = {**os.environ, "PYTHONPATH": str(REPO), "MESHNET_HOME": str(self.root), **env}
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(command, cwd=REPO, env=full_env, stdout=log, stderr=log)

    def events(self) -> list[dict[str, Any]]:
        found = []
        for line in self.log.read_text(errors="replace").splitlines():
            try:
                found.append(json.loads(line))
            except ValueError:
                continue
        return found

    def wait(self, timeout_s: float = 120.0) -> int:
        return self.process.wait(timeout=timeout_s)

    def signal(self, signum: signal.Signals) -> None:
        self.process.send_signal(signum)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
