"""The credit ledger's cost at 10,000 nodes, next to the heartbeats' on the same store.

The target (issue 24): crediting every verified hop of 10,000 nodes costs the
tracker no more than their heartbeats do. Both run in this process on one
migrated store (SQLite file, or PostgreSQL with MESHNET_TEST_POSTGRES_URL set
and ``--db postgres``), through the code the tracker runs:

- heartbeats: ``HeartbeatWriter.beat_many_viewed`` (the grouped commit of
  store/group_commit.py), every node once per round, in batches of ``--batch``
  (the heartbeats that reach one event-loop turn together);
- credit: ``CreditLedger.write`` (what one grouped credit commit runs), one
  verified hop receipt per node per round, as if each node closed one session
  per heartbeat interval (busier than the default model's nodes are), half of
  them from sessions with an API key (so the own-key lookup runs), in batches
  of ``--batch``.

Each is timed over ``--rounds`` rounds of all the nodes, on the tracker's CPU
(process time) and the wall clock. The LAST line is ``ratio: X``, X = credit
CPU per hop / heartbeat CPU per beat (the target is X <= 1).

    python benchmarks/credit_load.py [--nodes 10000] [--rounds 3] [--batch 64]
        [--db sqlite|postgres]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sqlalchemy import insert, text  # noqa: E402

from tracker_service.services.credits import (  # noqa: E402
    CreditLedger,
    LeaderboardCache,
    VerifiedHop,
)
from tracker_service.store.credit_tables import CreditIdentity, CreditKey  # noqa: E402
from tracker_service.store.credits import KINDS, leaderboard  # noqa: E402
from tracker_service.store.db import Database  # noqa: E402
from tracker_service.store.heartbeats import HeartbeatWriter  # noqa: E402
from tracker_service.store.tables import Node  # noqa: E402


def open_store(kind: str, folder: Path) -> Database:
    if kind == "postgres":
        url = os.environ.get("MESHNET_TEST_POSTGRES_URL", "")
        if not url:
            sys.exit("--db postgres needs MESHNET_TEST_POSTGRES_URL (its public schema is dropped)")
        db = Database(url)
        with db.engine.begin() as connection:
            connection.execute(text("DROP SCHEMA public CASCADE"))
            connection.execute(text("CREATE SCHEMA public"))
    else:
        db = Database(f"sqlite:///{folder / 'credit_load.db'}")
    db.migrate()
    return db


def seed(db: Database, nodes: int, now: float) -> list[str]:
    """`nodes` live node rows (bulk insert: registration is not what is measured), a
    tenth of them linked to 100 accounts, and keys 1..100 linked to those accounts."""
    ids = [f"{i:032x}" for i in range(nodes)]
    rows = [
        {
            "node_id": node_id,
            "public_key": b"\0" * 32,
            "endpoint": f"ws://10.0.{i // 250}.{i % 250}:9000",
            "state": "active",
            "state_reason": "",
            "audits_passed": 0,
            "model_artifact_digest": "a" * 64,
            "runtime_recipe_digest": "b" * 64,
            "shard_binding_digest": "c" * 64,
            "artifact_id": "model",
            "recipe_id": "recipe",
            "recipe_version": "1",
            "layer_count": 30,
            "shard_start": 0,
            "shard_end": 15,
            "identity": {},
            "capability": {},
            "throughput": 10.0,
            "load": 0.0,
            "open_sessions": 0,
            "tokens_served": 0,
            "session_id": f"{i:032x}",
            "session_expires_at": now + 900,
            "registered_at": now,
            "registrations": 1,
            "last_heartbeat_at": now,
            "live_until": now + 30,
            "reachability": "reachable",
            "reachability_reason": "",
            "relay_reason": "",
            "relayed_from": "",
            "cap_host": f"10.0.{i // 250}.{i % 250}",
        }
        for i, node_id in enumerate(ids)
    ]
    with db.sessions.begin() as session:
        session.execute(insert(Node), rows)
        session.execute(
            insert(CreditIdentity),
            [
                {"node_id": n, "account": f"acct{i % 100}", "linked_at": now}
                for i, n in enumerate(ids[::10])
            ],
        )
        session.execute(
            insert(CreditKey),
            [{"key_id": k, "account": f"acct{k % 100}", "linked_at": now} for k in range(1, 101)],
        )
    return ids


def timed(label: str, count: int, run: object) -> float:
    assert callable(run)
    cpu, wall = time.process_time(), time.perf_counter()
    run()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    per = cpu / count * 1000
    print(f"{label}: {count} in {wall:.2f} s wall, {count / wall:,.0f}/s; CPU {per:.3f} ms each")
    return per


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        now = time.time()
        db = open_store(args.db, Path(folder))
        ids = seed(db, args.nodes, now)
        print(f"store: {args.db}; {args.nodes} nodes; batches of {args.batch}")
        writer = HeartbeatWriter(db)
        ledger = CreditLedger(db)
        total = args.nodes * args.rounds

        def heartbeats() -> None:
            for r in range(args.rounds):
                at = now + r
                values = [
                    {
                        "node_id": n,
                        "nonce": f"{r:08x}{i:024x}",
                        "nonce_expires_at": at + 301,
                        "now": at,
                        "live_until": at + 30,
                        "session_expires_at": at + 900,
                        "load": 0.5,
                        "open_sessions": 1,
                        "tokens_served": 40 * r,
                        "throughput": None,
                    }
                    for i, n in enumerate(ids)
                ]
                for start in range(0, len(values), args.batch):
                    writer.beat_many_viewed(values[start : start + args.batch])

        def credits() -> None:
            for r in range(args.rounds):
                hops = [
                    VerifiedHop(n, 64, 15, 1.0, (i % 100) + 1 if i % 2 else None, now + r)
                    for i, n in enumerate(ids)
                ]
                for start in range(0, len(hops), args.batch):
                    ledger.write(hops[start : start + args.batch])

        beat_ms = timed("heartbeats", total, heartbeats)
        credit_ms = timed("credited hops", total, credits)
        with db.session() as session:
            rows = session.execute(text("SELECT count(*), sum(hops) FROM credit_buckets")).one()
        print(f"credit_buckets: {rows[0]} rows holding {rows[1]} hops; {ledger.commits} commits")
        for kind in KINDS:  # one sum of the ledger (what a cache rebuild costs)
            wall = time.perf_counter()
            with db.session() as session:
                board = leaderboard(session, kind=kind, now=now)
            wall = time.perf_counter() - wall
            print(f"leaderboard by {kind}: {len(board)} rows in {wall * 1000:.0f} ms")
        cache = LeaderboardCache(db)  # what GET /api/v1/credits reads per request
        wall = time.perf_counter()
        for _ in range(1000):
            cache.rows("account")
        wall = time.perf_counter() - wall
        print(
            f"leaderboard by account, cached: 1000 requests in {wall * 1000:.0f} ms "
            f"({cache.rebuilds} sum)"
        )
        db.dispose()
    print(f"ratio: {credit_ms / beat_ms:.2f}")


if __name__ == "__main__":
    main()
