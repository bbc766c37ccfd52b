"""kill -9 the tracker fifty times in a row while nodes register, heartbeat and certify.

A real tracker process (``meshnet-tracker serve`` on SQLite, forked from a
zygote that imported it once; see tracker_zygote.py) serves a load of signed
registrations and heartbeats from simulated nodes, while pairs of real tiny-Llama
nodes join one recipe after another and get it certified by a real distributed
forward. At a random moment (sometimes still starting, sometimes mid-certification)
the process gets SIGKILL. After each death:

- ``meshnet-tracker check-db`` passes (SQLite integrity and foreign keys, schema at
  head, no half-written evidence: certified iff complete live evidence that verifies);
- the ledger only moves forward: no certified recipe is dark again, no evidence row
  changed or vanished, evidence ids only grow;
- nothing acknowledged is lost: every registration answered 200 is in the database,
  and every node's last heartbeat is no older than its last one answered 200.

At the end one more life certifies every recipe the nodes brought.
``MESHNET_KILL9_LIVES`` sets the number of kills (default 50).
"""

from __future__ import annotations

import base64
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.tracker_service.conftest import register
from tests.tracker_service.helpers import FakeNode, heartbeat_body, identity_block
from tests.tracker_service.real_nodes import (
    RealNode,
    build_tiny_model,
    identity_for,
    start_real_node,
)
from tests.tracker_service.server_process import REPO, free_port

LIVES = int(os.environ.get("MESHNET_KILL9_LIVES", "50"))
RECIPES = 6  # pairs of real nodes, one recipe each, joining one after another
FAKE_NODES = 24
LOAD_THREADS = 2
READY_TIMEOUT_S = 60.0

TRACKER_ENV = {
    "MESHNET_TRACKER_LOG_LEVEL": "warning",
    "MESHNET_TRACKER_REGISTRATIONS_PER_MINUTE_PER_ADDRESS": "1000000",
    "MESHNET_TRACKER_ROUTE_REQUESTS_PER_MINUTE_PER_ADDRESS": "1000000",
    "MESHNET_TRACKER_FAILED_AUTH_PER_MINUTE_PER_ADDRESS": "1000000",
    "MESHNET_TRACKER_MAX_NODES_PER_ADDRESS": "1000000",
    "MESHNET_TRACKER_ALLOW_PLAINTEXT_NODES": "true",  # the fake nodes register ws://
    # Dial and certify at once, so kills land while certifications are in flight.
    "MESHNET_TRACKER_REACHABILITY_POLL_S": "0.05",
    "MESHNET_TRACKER_REACHABILITY_RETRY_S": "0.5",
    "MESHNET_TRACKER_CERTIFIER_POLL_S": "0.1",
    "MESHNET_TRACKER_CERTIFIER_BACKOFF_S": "0.2",
    "MESHNET_TRACKER_CERTIFIER_BACKOFF_MAX_S": "1",
    # A longer forward (still well under a second) widens the window a kill can land in.
    "MESHNET_TRACKER_CERTIFY_NEW_TOKENS": "32",
}


class Zygote:
    """The process that forks tracker lives (tests/tracker_service/tracker_zygote.py)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.tracker_service.tracker_zygote"],
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._read() == {"ready": True}

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the zygote exited {self.process.wait()}")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def ask(self, **request: Any) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@dataclass
class Member:
    """One node the load drives: its signer, identity, and what the tracker acknowledged."""

    signer: FakeNode
    identity: dict[str, Any]
    real: RealNode | None = None
    registered: bool = False  # in this tracker's view, as far as the node knows
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class Acks:
    registrations: set[str] = field(default_factory=set)
    heartbeats: dict[str, float] = field(default_factory=dict)  # node -> send time of last 200
    server_errors: list[str] = field(default_factory=list)
    answered: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def snapshot(self) -> tuple[set[str], dict[str, float]]:
        with self.lock:
            return set(self.registrations), dict(self.heartbeats)


class Load:
    """Threads registering and heartbeating members, through every death and restart."""

    def __init__(self, url: str, members: list[Member]) -> None:
        self.url = url
        self.members = members
        self.active: list[Member] = [m for m in members if m.real is None]
        self.acks = Acks()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._run, args=(seed,), daemon=True)
            for seed in range(LOAD_THREADS)
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)

    def activate(self, member: Member) -> None:
        self.active = [*self.active, member]

    def _run(self, seed: int) -> None:
        rng = random.Random(seed)
        with httpx.Client(base_url=self.url, timeout=5.0, trust_env=False) as client:
            while not self._stop.is_set():
                member = rng.choice(self.active)
                if not member.lock.acquire(blocking=False):
                    continue
                try:
                    self._drive(client, member)
                except httpx.HTTPError:
                    time.sleep(0.02)  # the tracker is dead or starting
                finally:
                    member.lock.release()

    def _drive(self, client: httpx.Client, member: Member) -> None:
        node_id = member.signer.node_id
        if not member.registered:
            response = register(client, member.signer, member.identity)
            self._answered(response, "register")
            if response.status_code == 200:
                member.registered = True
                if member.real is not None:
                    key = base64.b64decode(response.json()["tracker_public_key"])
                    member.real.tracker_key[0] = key
                with self.acks.lock:
                    self.acks.registrations.add(node_id)
            return
        sent = time.time()
        body = heartbeat_body()
        path = f"/api/v1/nodes/{node_id}/heartbeat"
        response = client.post(
            path, content=body, headers=member.signer.headers("POST", path, body)
        )
        self._answered(response, "heartbeat")
        if response.status_code == 200:
            with self.acks.lock:
                self.acks.heartbeats[node_id] = sent
        elif response.status_code in (401, 404, 409, 410):
            member.registered = False  # told to register again

    def _answered(self, response: httpx.Response, what: str) -> None:
        with self.acks.lock:
            self.acks.answered += 1
            if response.status_code >= 500:
                self.acks.server_errors.append(f"{what}: {response.status_code} {response.text}")


@dataclass
class Ledger:
    """What the database holds, read straight from SQLite after a death."""

    status: dict[tuple[str, str], str]
    evidence: dict[int, tuple[Any, ...]]
    heartbeats: dict[str, float]


def read_ledger(path: Path) -> Ledger:
    with sqlite3.connect(path) as db:
        status = {
            (a, r): s
            for a, r, s in db.execute(
                "SELECT model_artifact_digest, runtime_recipe_digest, status FROM recipes"
            )
        }
        evidence = {
            row[0]: tuple(row[1:])
            for row in db.execute(
                "SELECT id, recipe_pk, route_session_id, node_ids, shard_ranges, certified_at, "
                "revoked_at FROM certification_evidence"
            )
        }
        beats = dict(db.execute("SELECT node_id, last_heartbeat_at FROM nodes").fetchall())
    return Ledger(status, evidence, beats)


def certified(ledger: Ledger) -> set[tuple[str, str]]:
    return {key for key, status in ledger.status.items() if status == "certified"}


def check_forward(before: Ledger, after: Ledger, life: int) -> None:
    lost = certified(before) - certified(after)
    assert not lost, f"life {life}: certified recipes went back to dark: {lost}"
    for row_id, row in before.evidence.items():
        assert after.evidence.get(row_id) == row, f"life {life}: evidence {row_id} changed"
    if before.evidence and after.evidence:
        assert max(after.evidence) >= max(before.evidence)


def check_acknowledged(after: Ledger, acks: Acks, life: int) -> None:
    registrations, heartbeats = acks.snapshot()
    missing = registrations - set(after.heartbeats)
    assert not missing, f"life {life}: acknowledged registrations lost: {missing}"
    for node_id, sent in heartbeats.items():
        assert after.heartbeats[node_id] >= sent, (
            f"life {life}: node {node_id}'s heartbeat answered 200 at {sent} is not in the "
            f"database (last heartbeat {after.heartbeats[node_id]})"
        )


@pytest.fixture
def real_pairs(tmp_path: Path) -> Iterator[list[tuple[RealNode, RealNode]]]:
    model = build_tiny_model(tmp_path / "tiny-llama")
    pairs: list[tuple[RealNode, RealNode]] = []
    try:
        for i in range(RECIPES):
            # runtime_version is a recipe axis: each pair serves a recipe of its own.
            axes: dict[str, Any] = {"recipe_version": f"kill9-{i}", "runtime_version": f"0.1.{i}"}
            pairs.append(
                (
                    start_real_node(model, 0, 2, identity=identity_for(model, 0, 2, **axes)),
                    start_real_node(model, 2, 4, identity=identity_for(model, 2, 4, **axes)),
                )
            )
        yield pairs
    finally:
        for pair in pairs:
            for node in pair:
                node.stop()


def wait_registered(members: list[Member], deadline: float) -> None:
    while not all(m.registered for m in members) and time.monotonic() < deadline:
        time.sleep(0.01)


def pending_at_kill(reals: list[Member], acks: Acks, after: Ledger) -> bool:
    """A pair had registered (both acknowledged) but its recipe was still dark."""
    registered, _ = acks.snapshot()
    for first, second in zip(reals[::2], reals[1::2], strict=True):
        assert first.real is not None
        both = {first.signer.node_id, second.signer.node_id} <= registered
        if both and after.status.get(first.real.fingerprint) == "dark":
            return True
    return False


def wait_ready(url: str, pid: int, deadline: float) -> bool:
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/api/v1/state", timeout=1.0).status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        time.sleep(0.02)
    return False


def test_fifty_kill9s_leave_a_whole_database_and_a_ledger_that_only_moves_forward(
    tmp_path: Path, real_pairs: list[tuple[RealNode, RealNode]]
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    db_path = tmp_path / "tracker.db"
    db_url = f"sqlite:///{db_path}"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, **TRACKER_ENV, "MESHNET_HOME": str(home), "PYTHONPATH": str(REPO)}
    serve = ["serve", "--host", "127.0.0.1", "--port", str(port), "--db", db_url]
    serve.append("--allow-private-endpoints")  # the real nodes listen on loopback
    log = tmp_path / "tracker.log"

    ranges = [(0, 16), (10, 30), (0, 30), (16, 30)]
    fakes = [
        Member(FakeNode(endpoint=f"ws://127.0.0.1:{free_port()}"), identity_block(*ranges[i % 4]))
        for i in range(FAKE_NODES)
    ]
    reals = [
        Member(node.as_fake_node(), node.identity, real=node)
        for pair in real_pairs
        for node in pair
    ]
    load = Load(url, fakes + reals)
    zygote = Zygote(env)
    rng = random.Random(int(os.environ.get("MESHNET_KILL9_SEED", "13")))
    before = Ledger({}, {}, {})
    in_flight = started_kills = certified_in_loop = 0
    ready_s = check_s = 0.0
    began = time.monotonic()
    try:
        load.start()
        every = max(1, LIVES // RECIPES)
        for life in range(LIVES):
            joining: list[Member] = []
            if life % every == 0 and life // every < RECIPES:
                joining = reals[2 * (life // every) : 2 * (life // every) + 2]
                for member in joining:
                    load.activate(member)
            pid = zygote.ask(op="start", argv=serve, log=str(log))["pid"]
            began_life = time.monotonic()
            if rng.random() < 0.15:  # die while starting: migration, key, ledger recheck
                time.sleep(rng.uniform(0.0, 0.4))
                started_kills += 1
            else:
                ready = wait_ready(url, pid, began_life + READY_TIMEOUT_S)
                assert ready, f"life {life}: the tracker did not serve: {log.read_text()[-3000:]}"
                ready_s += time.monotonic() - began_life
                # A pair that joins is certified within a second: kill inside that second.
                if joining:
                    wait_registered(joining, time.monotonic() + 10.0)
                time.sleep(rng.uniform(0.0, 0.4) if joining else rng.uniform(0.02, 0.5))
            os.kill(pid, signal.SIGKILL)
            death = zygote.ask(op="reap", pid=pid)
            assert death["signal"] == signal.SIGKILL, (
                f"life {life}: the tracker ended on its own ({death}): {log.read_text()[-3000:]}"
            )
            checking = time.monotonic()
            checked = zygote.ask(op="run", argv=["check-db", "--db", db_url], log=str(log))
            assert checked["code"] == 0, f"life {life}: check-db failed: {log.read_text()[-2000:]}"
            check_s += time.monotonic() - checking
            after = read_ledger(db_path)
            check_forward(before, after, life)
            check_acknowledged(after, load.acks, life)
            certified_in_loop += len(certified(after)) - len(certified(before))
            if pending_at_kill(reals, load.acks, after):
                in_flight += 1
            before = after

        # One last life: every recipe the nodes brought gets certified.
        pid = zygote.ask(op="start", argv=serve, log=str(log))["pid"]
        assert wait_ready(url, pid, time.monotonic() + READY_TIMEOUT_S)
        deadline = time.monotonic() + 60.0
        while time.monotonic() < deadline:
            recipes = httpx.get(url + "/api/v1/state", timeout=5.0).json()["recipes"]
            ours = [r for r in recipes if r["recipe_version"].startswith("kill9-")]
            if len(ours) == RECIPES and all(r["status"] == "certified" for r in ours):
                break
            time.sleep(0.2)
        load.stop()
        os.kill(pid, signal.SIGTERM)
        zygote.ask(op="reap", pid=pid)
    finally:
        load.stop()
        zygote.close()

    final = read_ledger(db_path)
    check_forward(before, final, LIVES)
    assert zygote.process.returncode == 0
    assert len(certified(final)) == RECIPES, (
        f"{len(certified(final))} of {RECIPES} recipes certified: {log.read_text()[-3000:]}"
    )
    assert load.acks.server_errors == []
    assert "Traceback" not in log.read_text()
    assert len(load.acks.registrations) == FAKE_NODES + 2 * RECIPES
    print(
        f"\n{LIVES} kills ({started_kills} while starting, {in_flight} with a certification "
        f"pending, {certified_in_loop} recipes certified between kills) in "
        f"{time.monotonic() - began:.0f} s (starts {ready_s:.0f} s, check-db {check_s:.0f} s); "
        f"{load.acks.answered} answers to the load"
    )
