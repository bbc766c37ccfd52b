"""`meshnet-tracker serve` as a real process with any flags, over http or https, for
the hosting tests (TLS, forwarded headers, clients with --ca-file)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serving_tracker(
    home: Path, *args: str, scheme: str = "http", verify: Any = False, **env: str
) -> Iterator[str]:
    """Start a tracker on a free loopback port; yield its URL once it answers."""
    port = free_port()
    environment = {**os.environ, "MESHNET_HOME": str(home), "PYTHONPATH": str(REPO)}
    environment.update({"MESHNET_TRACKER_LOG_LEVEL": "warning", **env})
    command = [sys.executable, "-m", "tracker_service.cli", "serve", "--port", str(port)]
    command += ["--db", f"sqlite:///{home / 'tracker.db'}", *args]
    home.mkdir(parents=True, exist_ok=True)
    log = home / "tracker.log"
    with log.open("ab") as out:
        process = subprocess.Popen(command, cwd=REPO, env=environment, stdout=out, stderr=out)
    url = f"{scheme}://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, f"tracker exited: {log.read_text()}"
            try:
                httpx.get(url + "/api/v1/state", timeout=2, verify=verify)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, f"tracker never answered: {log.read_text()}"
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=15)
