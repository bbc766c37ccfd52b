"""``meshnet-tracker credits list [--json]`` reads the leaderboard from the database."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tracker_service.cli.commands import main
from tracker_service.domain.credit_rules import bucket_of
from tracker_service.store import credits as ledger
from tracker_service.store.db import Database


def test_credits_list_prints_the_table_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'tracker.db'}"
    database = Database(url)
    database.migrate()
    now = time.time()
    ledger.add_credit(
        database,
        [
            ledger.CreditRow("a" * 32, bucket_of(now), credit=3.0, hops=2, tokens=30),
            ledger.CreditRow("b" * 32, bucket_of(now), credit=5.0, hops=1, tokens=10),
        ],
    )
    database.dispose()

    assert main(["credits", "list", "--db", url, "--kind", "identity"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["RANK", "ID", "KIND"]
    assert lines[2].split()[:2] == ["1", "b" * 12] and "5.000" in lines[2]

    assert main(["credits", "list", "--db", url, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["id"], r["total"], r["rank"]) for r in rows] == [
        ("b" * 32, 5.0, 1),
        ("a" * 32, 3.0, 2),
    ]
    assert rows[0]["identities"][0]["hops"] == 1
