"""A real tracker process on loopback (`python -m tracker_service.cli serve`)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class TrackerProcess:
    def __init__(
        self,
        home: Path,
        db_url: str,
        *,
        port: int | None = None,
        extra_args: tuple[str, ...] = (),
        **env: str,
    ) -> None:
        self.home = home
        self.extra_args = extra_args
        self.db_url = db_url
        self.port = port or free_port()
        self.env = env
        self.process: subprocess.Popen[bytes] | None = None
        self.log = home / f"tracker-{self.port}.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 30.0) -> TrackerProcess:
        env = dict(os.environ)
        env.update(
            {
                "MESHNET_HOME": str(self.home),
                "MESHNET_TRACKER_LOG_LEVEL": "warning",
                # Tests and benchmarks register many nodes from loopback.
                "MESHNET_TRACKER_REGISTRATIONS_PER_MINUTE_PER_ADDRESS": "1000000",
                "MESHNET_TRACKER_ROUTE_REQUESTS_PER_MINUTE_PER_ADDRESS": "1000000",
                "MESHNET_TRACKER_FAILED_AUTH_PER_MINUTE_PER_ADDRESS": "1000000",
                "MESHNET_TRACKER_MAX_NODES_PER_ADDRESS": "1000000",
                # The fake test nodes register plaintext ws:// endpoints; real node
                # processes still serve pinned wss:// and are checked against the pin.
                # A test that wants the pinned-only default passes this as "false".
                "MESHNET_TRACKER_ALLOW_PLAINTEXT_NODES": "true",
                # Every test node is the test's own: a range one node holds serves.
                "MESHNET_TRACKER_TRUST_LONE_RANGES": "true",
                "PYTHONPATH": str(REPO),
            }
        )
        env.update(self.env)
        command = [sys.executable, "-m", "tracker_service.cli", "serve"]
        command += ["--host", "127.0.0.1", "--port", str(self.port), "--db", self.db_url]
        command += ["--allow-private-endpoints"]  # the test nodes listen on loopback
        command += list(self.extra_args)
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=log)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"tracker exited {self.process.returncode}: {self.log.read_text()}"
                )
            try:
                if httpx.get(self.url + "/api/v1/state", timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"tracker did not answer within {timeout_s}s: {self.log.read_text()}")

    def kill9(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def certify_through_the_ledger(db_url: str, route_session_id: str = "rs-test") -> None:
    """Promote the fp32 recipe of layers 0-15 and 15-30 as the tracker's certifier does,
    through its ledger, with evidence of a two-node forward."""
    from tests.tracker_service.helpers import identity_block
    from tracker_service.domain.recipe_identity import DistributedForwardEvidence, parse_identity
    from tracker_service.store.db import Database
    from tracker_service.store.ledger import PersistentLedger

    first, second = parse_identity(identity_block(0, 15)), parse_identity(identity_block(15, 30))
    evidence = DistributedForwardEvidence(
        route_session_id=route_session_id,
        route_epoch=1,
        node_ids=("a" * 32, "b" * 32),
        shard_ranges=((0, 15), (15, 30)),
        tokens_generated=16,
        layer_count=30,
        fingerprint=first.key,
        participants=(first, second),
    )
    database = Database(db_url)
    PersistentLedger(database).certify(first, evidence)
    database.dispose()
