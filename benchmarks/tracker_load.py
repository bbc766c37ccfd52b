"""Tracker load: signed heartbeats per second against a real server, and route-query time.

Starts `meshnet-tracker serve` (SQLite, loopback) as a subprocess, registers N
simulated nodes with real Ed25519 keys, then C keep-alive connections send
pre-signed heartbeats (real signatures, fresh nonces) for at most D seconds or
M requests. Prints heartbeats/s and latency percentiles. Then inserts 10,000
live nodes of one fingerprint (beside 10,000 others) into a fresh store and
times `live_nodes_for_fingerprint`. The LAST line is `ratio: X`, X = measured
heartbeats/s / 1,000.

    python benchmarks/tracker_load.py [--nodes 500] [--connections 16] [--seconds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import insert

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.tracker_service.helpers import capability, identity_block  # noqa: E402
from tests.tracker_service.server_process import TrackerProcess  # noqa: E402
from tracker_service.recipe_identity import parse_identity  # noqa: E402
from tracker_service.store.db import Database  # noqa: E402
from tracker_service.store.nodes import (  # noqa: E402
    Liveness,
    LiveNode,
    live_nodes_for_fingerprint,
)
from tracker_service.store.tables import Node  # noqa: E402

TARGET_PER_S = 1000.0
ROUTE_NODES = 10_000


class SimNode:
    def __init__(self, index: int) -> None:
        self.key = Ed25519PrivateKey.generate()
        raw = self.key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        self.public_b64 = base64.b64encode(raw).decode()
        self.node_id = hashlib.sha256(raw).hexdigest()[:32]
        self.index = index

    def request(self, path: str, body: bytes, port: int) -> bytes:
        ts = str(int(time.time()))
        nonce = os.urandom(16).hex()
        digest = hashlib.sha256(body).hexdigest()
        signature = self.key.sign(f"POST\n{path}\n{ts}\n{nonce}\n{digest}".encode())
        headers = [
            f"POST {path} HTTP/1.1",
            f"Host: 127.0.0.1:{port}",
            "Content-Type: application/json",
            f"Content-Length: {len(body)}",
            f"X-Meshnet-Node: {self.node_id}",
            f"X-Meshnet-Timestamp: {ts}",
            f"X-Meshnet-Nonce: {nonce}",
            f"X-Meshnet-Signature: {base64.b64encode(signature).decode()}",
        ]
        return ("\r\n".join(headers) + "\r\n\r\n").encode() + body


async def _exchange(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
) -> tuple[int, bytes]:
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    body = await reader.readexactly(length)
    return status, body


async def register_all(nodes: list[SimNode], port: int) -> float:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    started = time.perf_counter()
    for node in nodes:
        start = (node.index % 2) * 15
        identity = identity_block(start, start + 15)
        body = json.dumps(
            {
                "public_key": node.public_b64,
                "identity": identity,
                "capability": capability(identity),
                "endpoint": f"ws://127.0.0.1:{20000 + node.index}",
            }
        ).encode()
        status, answer = await _exchange(
            reader, writer, node.request("/api/v1/nodes/register", body, port)
        )
        if status != 200:
            raise SystemExit(f"registration refused: {status} {answer[:300]!r}")
    elapsed = time.perf_counter() - started
    writer.close()
    return len(nodes) / elapsed


async def heartbeat_load(
    requests: list[list[bytes]], port: int, seconds: float
) -> tuple[int, int, list[float], float]:
    latencies: list[float] = []
    failures = 0
    deadline = time.perf_counter() + seconds

    async def connection(batch: list[bytes]) -> None:
        nonlocal failures
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for request in batch:
            if time.perf_counter() > deadline:
                break
            sent = time.perf_counter()
            status, _ = await _exchange(reader, writer, request)
            latencies.append(time.perf_counter() - sent)
            if status != 200:
                failures += 1
        writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(connection(batch) for batch in requests))
    elapsed = time.perf_counter() - started
    return len(latencies), failures, latencies, elapsed


def _heartbeat(node: SimNode, body: bytes, port: int) -> bytes:
    return node.request(f"/api/v1/nodes/{node.node_id}/heartbeat", body, port)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its live descendants (Linux /proc)."""
    usage: dict[int, float] = {}
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the process ended while we looked
        child = int(stat.parent.name)
        parents[child] = int(fields[1])
        usage[child] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    tree, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        for child, ppid in parents.items():
            if ppid == parent and child not in tree:
                tree.add(child)
                frontier.append(child)
    return sum(usage.get(member, 0.0) for member in tree)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def route_query_benchmark(workdir: Path) -> tuple[float, float, float, int, str]:
    """Wall median and p99, CPU median (ms) of live_nodes_for_fingerprint, 10,000 candidates.

    CPU time is shown beside wall time because on a shared machine the wall time
    also counts waiting for a core.
    """
    database = Database(f"sqlite:///{workdir / 'route.db'}")
    database.migrate()
    now = time.time()
    liveness = Liveness(live_window_s=30.0, session_ttl_s=900.0)
    target = parse_identity(identity_block(0, 15))
    other = parse_identity(identity_block(0, 15, compute_dtype="float16"))
    rows = []
    for i in range(2 * ROUTE_NODES):
        identity = target if i % 2 == 0 else other
        start = (i // 2) % 2 * 15
        rows.append(
            {
                "node_id": f"{i:032x}",
                "public_key": os.urandom(32),
                "endpoint": f"ws://10.0.{i // 250}.{i % 250}:7070",
                "state": "active",
                "state_reason": "",
                "model_artifact_digest": identity.model_artifact_digest,
                "runtime_recipe_digest": identity.runtime_recipe_digest,
                "shard_binding_digest": identity.shard_binding_digest,
                "artifact_id": identity.artifact_id,
                "recipe_id": identity.recipe_id,
                "recipe_version": identity.recipe_version,
                "layer_count": 30,
                "shard_start": start,
                "shard_end": start + 15,
                "identity": identity.identity_block(),
                "capability": {"passed": True},
                "throughput": float(i % 97),
                "load": 0.0,
                "open_sessions": 0,
                "tokens_served": 0,
                "session_id": f"{i:032x}",
                "session_expires_at": now + liveness.session_ttl_s,
                "registered_at": now,
                "registrations": 1,
                "last_heartbeat_at": now,
                "live_until": now + 3600,
                "reachability": "reachable",
                "reachability_reason": "",
                "reachability_checked_at": now,
            }
        )
    with database.sessions.begin() as session:
        session.execute(insert(Node), rows)
    timings = []
    with database.session() as session:
        columns = ", ".join(LiveNode._fields)
        plan = (
            session.connection()
            .exec_driver_sql(
                f"EXPLAIN QUERY PLAN SELECT {columns} FROM nodes WHERE model_artifact_digest=? "
                "AND runtime_recipe_digest=? AND state='active' AND live_until>=?",
                (*target.key, now),
            )
            .fetchall()
        )
        cpu_timings = []
        for _ in range(40):
            started, cpu_started = time.perf_counter(), time.thread_time()
            found = live_nodes_for_fingerprint(session, *target.key, now=now)
            timings.append((time.perf_counter() - started) * 1000)
            cpu_timings.append((time.thread_time() - cpu_started) * 1000)
    database.dispose()
    detail = " ".join(str(step[-1]) for step in plan)
    return (
        statistics.median(timings),
        percentile(timings, 0.99),
        statistics.median(cpu_timings),
        len(found),
        detail,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--max-requests", type=int, default=40_000)
    parser.add_argument("--workers", type=int, default=1, help="tracker worker processes")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="meshnet-load-") as tmp:
        home = Path(tmp)
        # The reachability dialer (issue 5) would dial the 500 fake endpoints; off, so
        # this measures the heartbeat path alone.
        tracker = TrackerProcess(
            home,
            f"sqlite:///{home / 'tracker.db'}",
            extra_args=("--workers", str(args.workers)),
            MESHNET_TRACKER_BACKGROUND_TASKS="false",
        ).start()
        try:
            nodes = [SimNode(i) for i in range(args.nodes)]
            reg_rate = asyncio.run(register_all(nodes, tracker.port))
            # Pre-sign every heartbeat (real signatures, unique nonces) so the load
            # generator's signing does not compete with the server for the 2 cores.
            per_connection = max(1, args.max_requests // args.connections)
            body = json.dumps({"load": 0.3, "open_sessions": 1, "tokens_served": 12}).encode()
            batches = [
                [
                    _heartbeat(nodes[(c * per_connection + k) % len(nodes)], body, tracker.port)
                    for k in range(per_connection)
                ]
                for c in range(args.connections)
            ]
            assert tracker.process is not None
            cpu_before = cpu_seconds(tracker.process.pid)
            count, failures, latencies, elapsed = asyncio.run(
                heartbeat_load(batches, tracker.port, args.seconds)
            )
            server_cpu = cpu_seconds(tracker.process.pid) - cpu_before
            load_average = os.getloadavg()[0]
        finally:
            tracker.stop()
        median_ms, p99_route_ms, cpu_ms_route, found, plan = route_query_benchmark(home)

    rate = count / elapsed
    print(
        f"cores: {os.cpu_count()}  store: SQLite (WAL)  server: `meshnet-tracker serve "
        f"--workers {args.workers}` on loopback, background dialer off"
    )
    print(f"registered nodes: {args.nodes} ({reg_rate:.0f} registrations/s, one connection)")
    print(
        f"heartbeats: {count} in {elapsed:.2f}s over {args.connections} connections, "
        f"{failures} refused"
    )
    print(f"heartbeats/s: {rate:.0f}")
    cpu_ms = 1000 * server_cpu / max(count, 1)
    print(
        f"server CPU per heartbeat: {cpu_ms:.2f} ms ({1000 / cpu_ms:.0f}/s per fully used core); "
        f"machine load average during the run: {load_average:.1f} on {os.cpu_count()} cores"
    )
    print(
        "latency ms: p50 {:.1f}  p90 {:.1f}  p99 {:.1f}  max {:.1f}".format(
            *(1000 * percentile(latencies, q) for q in (0.5, 0.9, 0.99, 1.0))
        )
    )
    print(
        f"route query live_nodes_for_fingerprint: {found} of {2 * ROUTE_NODES} nodes, "
        f"median {median_ms:.1f} ms, p99 {p99_route_ms:.1f} ms, CPU median {cpu_ms_route:.1f} ms "
        f"(target < 50 ms)"
    )
    print(f"route query plan: {plan}")
    print(f"ratio: {rate / TARGET_PER_S:.2f}")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
