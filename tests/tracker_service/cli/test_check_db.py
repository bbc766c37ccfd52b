"""``meshnet-tracker check-db``: a whole database passes with a one-line summary; a
missing, unreadable or half-written one fails with one sentence, a reason code and
a non-zero exit (never a traceback); a start killed mid-migration leaves no
half-made schema behind."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tracker_service.helpers import identity_block
from tests.tracker_service.server_process import REPO
from tracker_service.cli.commands import main
from tracker_service.domain.recipe_identity import DistributedForwardEvidence, parse_identity
from tracker_service.store.db import Database
from tracker_service.store.ledger import PersistentLedger

FIRST = parse_identity(identity_block(0, 16))
SECOND = parse_identity(identity_block(10, 30))


def evidence() -> DistributedForwardEvidence:
    return DistributedForwardEvidence(
        route_session_id="rs-7",
        route_epoch=1,
        node_ids=("a" * 32, "b" * 32),
        shard_ranges=((0, 16), (16, 30)),
        tokens_generated=4,
        layer_count=30,
        fingerprint=FIRST.key,
        participants=(FIRST, SECOND),
    )


@pytest.fixture
def certified_db(tmp_path: Path) -> Path:
    """A tracker database with one recipe certified by real-shaped evidence."""
    path = tmp_path / "tracker.db"
    database = Database(f"sqlite:///{path}")
    database.migrate()
    ledger = PersistentLedger(database)
    ledger.register(FIRST)
    ledger.certify(FIRST, evidence())
    database.dispose()
    return path


def check(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["check-db", "--db", f"sqlite:///{path}"])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def tamper(path: Path, sql: str) -> None:
    with sqlite3.connect(path) as db:
        db.execute(sql)


def test_a_whole_database_passes_with_what_it_holds(
    certified_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = check(certified_db, capsys)
    assert code == 0
    assert "passes its integrity check" in out
    assert "1 recipes (1 certified), 1 certification evidence rows" in out


def test_a_missing_database_is_refused_and_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = check(tmp_path / "nowhere" / "tracker.db", capsys)
    assert code == 2
    assert "[database-missing]" in err
    assert not (tmp_path / "nowhere").exists()


def test_a_file_that_is_not_a_database_fails_with_a_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junk = tmp_path / "tracker.db"
    junk.write_bytes(b"not a database at all" * 500)
    code, _, err = check(junk, capsys)
    assert code == 2
    assert err.startswith("meshnet-tracker: the database")
    assert err.rstrip().endswith("[integrity-check-failed]")


def test_torn_pages_fail_the_sqlite_check(
    certified_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with sqlite3.connect(certified_db) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(certified_db.read_bytes())
    for page in range(2, len(data) // page_size):  # every page but the header's
        data[page * page_size + 8 : page * page_size + 64] = os.urandom(56)
    certified_db.write_bytes(bytes(data))
    code, _, err = check(certified_db, capsys)
    assert code == 2
    assert "[integrity-check-failed]" in err


@pytest.mark.parametrize(
    ("sql", "words"),
    [
        ("DELETE FROM certification_evidence", "no live evidence row records it"),
        ("UPDATE recipes SET status = 'dark'", "half-finished promotion"),
        ("UPDATE certification_evidence SET shard_ranges = '[[0, 16]]'", "1 shard ranges"),
        ("UPDATE certification_evidence SET node_ids = '[]'", "names no node"),
        ("UPDATE certification_evidence SET layer_count = 12", "covers 12 layers"),
        ("UPDATE recipes SET certified_node_count = 3", "says 3 nodes"),
        ("UPDATE recipes SET status = 'half'", "unknown status"),
        (
            "UPDATE certification_evidence SET participants = '[{\"schema_version\": 9}, {}]'",
            "no longer verifies",
        ),
        ("UPDATE alembic_version SET version_num = '0001'", "not at this tracker's"),
    ],
    ids=[
        "evidence-lost",
        "dark-with-live-evidence",
        "ranges-short",
        "no-nodes",
        "layer-count",
        "node-count",
        "status",
        "participants",
        "schema",
    ],
)
def test_half_written_ledger_state_fails_with_the_problem_named(
    certified_db: Path, capsys: pytest.CaptureFixture[str], sql: str, words: str
) -> None:
    tamper(certified_db, sql)
    code, _, err = check(certified_db, capsys)
    assert code == 2
    assert words in err
    assert "[integrity-check-failed]" in err


def test_evidence_of_a_deleted_recipe_fails_the_foreign_key_check(
    certified_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tamper(certified_db, "DELETE FROM recipes")  # foreign keys are off in this connection
    code, _, err = check(certified_db, capsys)
    assert code == 2
    assert "points at a missing row of recipes" in err


# Run in a fresh, single-threaded interpreter (forking pytest, which may hold threads
# from other tests, could deadlock a child on a lock one of them held): for each
# statement number, a forked child migrates a fresh database and SIGKILLs itself
# at that statement; the parent then starts again and runs the integrity check.
KILL_MID_MIGRATION = """
import json, os, signal, sys
from sqlalchemy import event
from tracker_service.store.db import Database
from tracker_service.store.integrity import check_database

folder, points = sys.argv[1], [int(n) for n in sys.argv[2:]]
for point in points:
    url = f"sqlite:///{folder}/tracker-{point}.db"
    child = os.fork()
    if child == 0:
        try:
            database = Database(url)
            seen = [0]

            def trace(_sql):
                seen[0] += 1
                if seen[0] == point:
                    os.kill(os.getpid(), signal.SIGKILL)

            event.listen(
                database.engine, "connect", lambda c, _r: c.set_trace_callback(trace)
            )
            database.migrate()
        finally:
            os._exit(0)  # the migration had fewer statements than that
    _, status = os.waitpid(child, 0)
    try:
        database = Database(url)
        database.migrate()
        problems = check_database(database).problems
        database.dispose()
    except Exception as exc:
        problems = [f"{type(exc).__name__}: {str(exc).splitlines()[0]}"]
    killed = os.WIFSIGNALED(status)
    print(json.dumps({"point": point, "killed": killed, "problems": problems}), flush=True)
"""


def test_a_start_killed_mid_migration_leaves_a_schema_the_next_start_completes(
    tmp_path: Path,
) -> None:
    points = [3, 9, 17, 26, 40, 52, 60]
    done = subprocess.run(
        [sys.executable, "-c", KILL_MID_MIGRATION, str(tmp_path), *map(str, points)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=True,
    )
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["point"] for r in results] == points
    assert sum(r["killed"] for r in results) >= len(points) - 1  # the migration is long enough
    # Before the fix: "table nodes already exists" on every start after the kill.
    assert [r for r in results if r["problems"]] == []
