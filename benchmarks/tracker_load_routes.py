"""Route formation and /api/v1/state at scale, for benchmarks/tracker_load.py.

Runs against the tracker the load benchmark started, after its nodes registered.
The benchmark's tracker runs without the reachability dialer (it would dial
10,000 fake endpoints), so here every registered node is marked reachable in
the database, as a dial would, and the recipe certified, as the certifier would;
both bump the recipe's routing version as the real writers do.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text

from tracker_service.domain.keys import TrackerKey
from tracker_service.services.route_planner import RoutePlanner
from tracker_service.store.db import Database
from tracker_service.store.route_candidates import Key


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def make_routable(db_url: str) -> list[Key]:
    """All active nodes reachable and measured, every recipe certified; returns the
    fingerprints."""
    database = Database(db_url)
    try:
        with database.sessions.begin() as session:
            session.execute(
                text(
                    "UPDATE nodes SET reachability='reachable', reachability_reason='benchmark', "
                    "reachability_checked_at=:now WHERE state='active'"
                ),
                {"now": time.time()},
            )
            session.execute(
                text(
                    "UPDATE recipes SET status='certified', certified_at=:now, "
                    "routing_version=routing_version+1"
                ),
                {"now": time.time()},
            )
            # A network in service: the tracker has timed every node (store/node_speeds.py),
            # so formation reads and weighs 10,000 measurements too.
            session.execute(
                text(
                    "INSERT INTO node_speeds (model_artifact_digest, node_id, ms_per_layer, "
                    "steps, updated_at) SELECT model_artifact_digest, node_id, 1000.0 / "
                    "((CASE WHEN throughput > 0 THEN throughput ELSE 1.0 END) * "
                    "(shard_end - shard_start)), 16, :now FROM nodes WHERE state='active'"
                ),
                {"now": time.time()},
            )
            rows = session.execute(
                text("SELECT model_artifact_digest, runtime_recipe_digest FROM recipes")
            ).all()
        return [(str(a), str(r)) for a, r in rows]
    finally:
        database.dispose()


class CollectorClock:
    """Time spent in the garbage collector while the block runs (gc.callbacks)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.full = 0
        self._began = 0.0

    def __enter__(self) -> CollectorClock:
        gc.callbacks.append(self._tick)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self._tick)

    def _tick(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._began = time.perf_counter()
            return
        self.seconds += time.perf_counter() - self._began
        self.full += info["generation"] == 2


@dataclass
class PlannerTimes:
    first_ms: float
    p50_ms: float
    p99_ms: float
    cpu_p50_ms: float
    cpu_p99_ms: float
    gc_ms: float  # the collector's time during the timed plans, all of them together
    gc_full: int  # of which full (generation 2) collections
    count: int
    rereads: int
    hops: int
    candidates: int


def time_planner(db_url: str, key: Key, count: int) -> PlannerTimes:
    """`RoutePlanner.plan` in this process: ledger gate, candidates, formation, signed ticket."""
    database = Database(db_url)
    planner = RoutePlanner(database, TrackerKey.from_seed(b"\x07" * 32), ticket_ttl_s=600.0)
    try:
        started = time.perf_counter()
        plan = planner.plan(key)
        first_ms = (time.perf_counter() - started) * 1000
        fills_before = planner.cache.stats.fills
        walls, cpus = [], []
        with CollectorClock() as collector:
            for _ in range(count):
                started, cpu_started = time.perf_counter(), time.thread_time()
                plan = planner.plan(key)
                walls.append((time.perf_counter() - started) * 1000)
                cpus.append((time.thread_time() - cpu_started) * 1000)
        _, candidates = planner.candidates(key)
        return PlannerTimes(
            first_ms=first_ms,
            p50_ms=statistics.median(walls),
            p99_ms=percentile(walls, 0.99),
            cpu_p50_ms=statistics.median(cpus),
            cpu_p99_ms=percentile(cpus, 0.99),
            gc_ms=collector.seconds * 1000,
            gc_full=collector.full,
            count=count,
            rereads=planner.cache.stats.fills - fills_before,
            hops=len(plan.hops),
            candidates=len(candidates),
        )
    finally:
        database.dispose()


async def exchange(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
) -> tuple[int, bytes]:
    """One HTTP/1.1 request on a kept-alive connection: (status, body)."""
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return status, await reader.readexactly(length)


def _request(method: str, path: str, port: int, body: bytes = b"") -> bytes:
    head = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    if body:
        head += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


async def time_http_routes(port: int, key: Key, count: int) -> tuple[float, float, int]:
    """POST /api/v1/routes `count` times on one keep-alive connection: p50, p99 ms, failures."""
    body = json.dumps({"model_artifact_digest": key[0], "runtime_recipe_digest": key[1]}).encode()
    request = _request("POST", "/api/v1/routes", port, body)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    timings, failures = [], 0
    for _ in range(count):
        started = time.perf_counter()
        status, _ = await exchange(reader, writer, request)
        timings.append((time.perf_counter() - started) * 1000)
        failures += status != 200
    writer.close()
    return statistics.median(timings), percentile(timings, 0.99), failures


async def time_state(port: int, *, repeats: int, page: int) -> dict[str, Any]:
    """The default /api/v1/state, then a walk over every page of `page` nodes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    default = []
    for _ in range(repeats):
        started = time.perf_counter()
        status, answer = await exchange(reader, writer, _request("GET", "/api/v1/state", port))
        default.append((time.perf_counter() - started) * 1000)
        if status != 200:
            raise SystemExit(f"/api/v1/state answered {status}: {answer[:300]!r}")
    listed = len(json.loads(answer)["nodes"])
    pages, seen, cursor = [], [], None
    walk_started = time.perf_counter()
    while True:
        path = f"/api/v1/state?limit={page}" + (f"&cursor={cursor}" if cursor else "")
        started = time.perf_counter()
        status, answer = await exchange(reader, writer, _request("GET", path, port))
        pages.append((time.perf_counter() - started) * 1000)
        if status != 200:
            raise SystemExit(f"{path} answered {status}: {answer[:300]!r}")
        document = json.loads(answer)
        seen += [n["node_id"] for n in document["nodes"]]
        cursor = document["next_cursor"]
        if cursor is None:
            break
    walk_ms = (time.perf_counter() - walk_started) * 1000
    writer.close()
    return {
        "default_p50": statistics.median(default),
        "default_p99": percentile(default, 0.99),
        "default_listed": listed,
        "pages": len(pages),
        "page_p50": statistics.median(pages),
        "page_p99": percentile(pages, 0.99),
        "walk_ms": walk_ms,
        "seen": len(seen),
        "distinct": len(set(seen)),
        "total": document["nodes_total"],
    }
