"""Tracker load at 10,000 nodes: registrations, heartbeats, route formation, state pages.

For SQLite and/or PostgreSQL, starts `meshnet-tracker serve --workers 2`
(loopback, background dialer off) as a subprocess and, with N simulated nodes
holding real Ed25519 keys:

- registers them all over C connections (registrations/s);
- sends pre-signed heartbeats (real signatures, fresh nonces) as fast as the
  server answers, for at most D seconds or M requests (heartbeats/s, p99);
- sends one heartbeat from every node inside one heartbeat interval, each at
  its own slot, as the nodes' real cadence does (10,000 nodes every 10 s is
  the 1,000/s target), open loop on as many keep-alive connections as the
  answers need (tracker_load_cadence.py), and reports the rate answered, the
  latency, how far sends fell behind their slots and each worker's CPU share;
- marks the nodes reachable and the recipe certified, and times route
  formation (``RoutePlanner.plan``, in process and over ``POST /api/v1/routes``;
  in process also its CPU time and the garbage collector's);
- times ``/api/v1/state`` by default and walks all its pages.

The LAST line is `ratio: X`, X = the lower store's saturating heartbeats/s / 1,000.
PostgreSQL: `eval "$(bash .ci/start-postgres.sh)"` first; its public schema is dropped.

    python benchmarks/tracker_load.py [--db sqlite|postgres|both] [--nodes 10000]
        [--skip saturating|cadence|routes]...
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import text

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.tracker_load_cadence import heartbeat_cadence  # noqa: E402
from benchmarks.tracker_load_routes import (  # noqa: E402
    exchange,
    make_routable,
    percentile,
    time_http_routes,
    time_planner,
    time_state,
)
from tests.tracker_service.helpers import capability, identity_block  # noqa: E402
from tests.tracker_service.server_process import TrackerProcess  # noqa: E402
from tracker_service.store.db import Database  # noqa: E402

TARGET_PER_S = 1000.0


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
                "device_class": "cpu",
            }
        ).encode()
        status, answer = await exchange(
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
            status, _ = await exchange(reader, writer, request)
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
    return sum(cpu_by_process(pid).values())


def cpu_by_process(pid: int) -> dict[int, float]:
    """User + system CPU seconds of a process and each of its live descendants."""
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
    return {member: usage.get(member, 0.0) for member in tree}


@dataclass
class BackendResult:
    name: str
    lines: list[str]
    heartbeats_per_s: float
    failures: int


async def register_concurrently(nodes: list[SimNode], port: int, connections: int) -> float:
    """Registrations/s over `connections` keep-alive connections."""
    started = time.perf_counter()
    await asyncio.gather(*(register_all(nodes[c::connections], port) for c in range(connections)))
    return len(nodes) / (time.perf_counter() - started)


def reset_postgres(url: str) -> None:
    database = Database(url)
    with database.engine.begin() as connection:
        connection.execute(text("DROP SCHEMA public CASCADE"))
        connection.execute(text("CREATE SCHEMA public"))
    database.dispose()


def cadence_run(
    nodes: list[SimNode],
    body: bytes,
    tracker: TrackerProcess,
    args: argparse.Namespace,
    lines: list[str],
) -> int:
    """One heartbeat from every node inside one interval; returns the refusals."""
    assert tracker.process is not None
    # Signed before the measured interval (inside the tracker's 300 s timestamp window).
    cadence = [_heartbeat(node, body, tracker.port) for node in nodes]
    before = cpu_by_process(tracker.process.pid)
    result = asyncio.run(
        heartbeat_cadence(
            cadence,
            tracker.port,
            args.interval,
            exchange=exchange,
            connections=args.cadence_connections,
        )
    )
    used = {
        pid: seconds - before.get(pid, 0.0)
        for pid, seconds in cpu_by_process(tracker.process.pid).items()
    }
    cpu_ms = 1000 * sum(used.values()) / max(result.answered, 1)
    # How the connections fell on the workers: one worker with most of them would
    # leave the other's core idle (the workers share one listening socket).
    shares = "/".join(
        f"{100 * s / max(sum(used.values()), 1e-9):.0f}"
        for s in sorted(used.values(), reverse=True)
    )
    ms = [1000 * s for s in result.latencies]
    lags = [1000 * s for s in result.lags]
    lines.append(
        f"heartbeats at cadence: all {len(nodes)} nodes once in {args.interval:.0f}s "
        f"({result.offered / args.interval:.0f}/s offered, open loop): "
        f"{result.answered / result.elapsed:.0f}/s answered ({result.answered} in "
        f"{result.elapsed:.2f}s), {result.refused} refused, {result.errors} unanswered; "
        "latency ms p50 "
        f"{percentile(ms, 0.5):.1f} p99 {percentile(ms, 0.99):.1f}; sent behind slot ms p50 "
        f"{percentile(lags, 0.5):.1f} p99 {percentile(lags, 0.99):.1f} worst {max(lags):.0f}; "
        f"{result.connections} keep-alive connections; server CPU {cpu_ms:.2f} ms per "
        f"heartbeat (% by process: {shares}); load average {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores"
    )
    return result.refused + result.offered - result.answered


def run_backend(name: str, url: str, home: Path, args: argparse.Namespace) -> BackendResult:
    lines: list[str] = []
    # The reachability dialer would dial the fake endpoints; off, so this measures the
    # tracker's own paths (tracker_load_routes marks the nodes reachable instead).
    tracker = TrackerProcess(
        home,
        url,
        extra_args=("--workers", str(args.workers)),
        MESHNET_TRACKER_BACKGROUND_TASKS="false",
        MESHNET_TRACKER_HEARTBEAT_INTERVAL_S=str(args.interval),
        # Registering 10,000 nodes takes minutes; a real node heartbeats from its
        # registration on, these only once all are in: a wide window keeps the early
        # ones live meanwhile (the cadence offered stays one beat per interval).
        MESHNET_TRACKER_MISSED_HEARTBEATS="1000",
    ).start(timeout_s=60.0)
    try:
        assert tracker.process is not None
        nodes = [SimNode(i) for i in range(args.nodes)]
        cpu_before = cpu_seconds(tracker.process.pid)
        reg_rate = asyncio.run(register_concurrently(nodes, tracker.port, args.connections))
        reg_cpu_ms = 1000 * (cpu_seconds(tracker.process.pid) - cpu_before) / len(nodes)
        lines.append(
            f"registrations: {args.nodes} nodes, {reg_rate:.0f} registrations/s "
            f"over {args.connections} connections; server CPU {reg_cpu_ms:.1f} ms per "
            f"registration; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
        )

        body = json.dumps({"load": 0.3, "open_sessions": 1, "tokens_served": 12}).encode()
        rate, failures = float("nan"), 0
        if "saturating" not in args.skip:
            # Pre-signed (real signatures, unique nonces) so the load generator's signing
            # does not compete with the server for the cores during the run.
            per_connection = max(1, args.max_requests // args.connections)
            batches = [
                [
                    _heartbeat(nodes[(c * per_connection + k) % len(nodes)], body, tracker.port)
                    for k in range(per_connection)
                ]
                for c in range(args.connections)
            ]
            cpu_before = cpu_seconds(tracker.process.pid)
            count, failures, latencies, elapsed = asyncio.run(
                heartbeat_load(batches, tracker.port, args.seconds)
            )
            server_cpu = cpu_seconds(tracker.process.pid) - cpu_before
            rate = count / elapsed
            cpu_ms = 1000 * server_cpu / max(count, 1)
            lines.append(
                f"heartbeats/s: {rate:.0f} ({count} in {elapsed:.2f}s, {args.connections} "
                f"connections as fast as answered, {failures} refused); latency ms p50 "
                f"{1000 * percentile(latencies, 0.5):.1f} p99 "
                f"{1000 * percentile(latencies, 0.99):.1f}; server CPU {cpu_ms:.2f} ms per "
                "heartbeat; load average "
                f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
            )

        refused = 0
        if "cadence" not in args.skip:
            refused = cadence_run(nodes, body, tracker, args, lines)
        total_failures = failures + refused

        if "routes" in args.skip:
            return BackendResult(name, lines, rate, total_failures)
        [key] = make_routable(url)
        planned = time_planner(url, key, args.routes)
        lines.append(
            f"route formation (RoutePlanner.plan, {planned.candidates} candidates, "
            f"{planned.hops} hops): p50 {planned.p50_ms:.1f} ms p99 {planned.p99_ms:.1f} ms "
            f"over {planned.count} (CPU p50 {planned.cpu_p50_ms:.1f} ms p99 "
            f"{planned.cpu_p99_ms:.1f} ms; garbage collection {planned.gc_ms:.0f} ms in all, "
            f"{planned.gc_full} full; {planned.rereads} "
            f"list re-reads; the first, reading the list: {planned.first_ms:.0f} ms) "
            "(target p99 <= 50 ms)"
        )
        p50, p99, route_failures = asyncio.run(time_http_routes(tracker.port, key, args.routes))
        total_failures += route_failures
        lines.append(
            f"route formation over HTTP (POST /api/v1/routes, {args.workers} workers): "
            f"p50 {p50:.1f} ms p99 {p99:.1f} ms over {args.routes}, {route_failures} failed"
        )
        state = asyncio.run(time_state(tracker.port, repeats=20, page=args.page))
        lines.append(
            f"/api/v1/state: default ({state['default_listed']} nodes) p50 "
            f"{state['default_p50']:.0f} ms p99 {state['default_p99']:.0f} ms; pages of "
            f"{args.page}: {state['pages']} pages, p50 {state['page_p50']:.0f} ms p99 "
            f"{state['page_p99']:.0f} ms, all {state['total']} nodes in "
            f"{state['walk_ms']:.0f} ms, {state['distinct']} distinct of {state['seen']} listed"
        )
    finally:
        tracker.stop()
    return BackendResult(name, lines, rate, total_failures)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    postgres_url = os.environ.get("MESHNET_TEST_POSTGRES_URL", "")
    parser.add_argument(
        "--db",
        choices=("sqlite", "postgres", "both"),
        default="both" if postgres_url else "sqlite",
    )
    parser.add_argument(
        "--postgres-url",
        default=postgres_url,
        help="a throwaway database: its public schema is dropped first "
        "(default: $MESHNET_TEST_POSTGRES_URL, see .ci/start-postgres.sh)",
    )
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2, help="tracker worker processes")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument(
        "--cadence-connections",
        type=int,
        default=16,
        help="keep-alive connections opened before the cadence run (more open if all are busy)",
    )
    parser.add_argument("--interval", type=float, default=10.0, help="heartbeat interval, s")
    parser.add_argument("--seconds", type=float, default=10.0, help="saturating run, at most")
    parser.add_argument("--max-requests", type=int, default=40_000)
    parser.add_argument("--routes", type=int, default=300, help="route formations timed")
    parser.add_argument("--page", type=int, default=500, help="/api/v1/state page size")
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=("saturating", "cadence", "routes"),
        help="leave a part out (repeatable), to time another alone",
    )
    args = parser.parse_args()
    if args.db != "sqlite" and not args.postgres_url:
        parser.error("PostgreSQL needs --postgres-url or MESHNET_TEST_POSTGRES_URL")

    results = []
    for name in ("sqlite", "postgres"):
        if args.db not in (name, "both"):
            continue
        with tempfile.TemporaryDirectory(prefix="meshnet-load-") as tmp:
            if name == "sqlite":
                url, label = f"sqlite:///{Path(tmp) / 'tracker.db'}", "SQLite (WAL)"
            else:
                reset_postgres(args.postgres_url)
                url, label = args.postgres_url, "PostgreSQL"
            result = run_backend(label, url, Path(tmp), args)
        for line in result.lines:
            print(f"[{result.name}] {line}", flush=True)
        results.append(result)

    print(
        f"cores: {os.cpu_count()}; server: `meshnet-tracker serve --workers {args.workers}` "
        "on loopback, background dialer off; load generator on the same cores"
    )
    slowest = min(results, key=lambda r: r.heartbeats_per_s)
    print(f"heartbeats/s vs the 1,000/s target: the lower of the stores, {slowest.name}")
    print(f"ratio: {slowest.heartbeats_per_s / TARGET_PER_S:.2f}")
    return 0 if all(r.failures == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
