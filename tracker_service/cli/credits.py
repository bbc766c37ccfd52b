"""``meshnet-tracker credits list [--kind K] [--limit N] [--json]``: the leaderboard.

Read from the tracker's database, the same rows ``GET /api/v1/credits`` answers
(docs/credits.md): rank, who, display name, team, total, last 24 h, last 7 days.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

from tracker_service.api.schemas.credits import as_json
from tracker_service.cli.table import table
from tracker_service.services import credit_policy
from tracker_service.store.db import Database


def cmd_list(args: argparse.Namespace, database: Database) -> int:
    with database.session() as session:
        rows = credit_policy.leaderboard(session, kind=args.kind, now=time.time())[: args.limit]
    if args.json:
        print(json.dumps([as_json(r, with_identities=True) for r in rows], indent=2))
        return 0
    if not rows:
        print("No credit yet: no verified hop or committed job task has been recorded.")
        return 0
    print(
        table(
            ("RANK", "ID", "KIND", "NAME", "TEAM", "TOTAL", "24H", "7D", "NOTE"),
            [
                (
                    str(r.rank),
                    r.id if r.kind != "identity" else r.id[:12],
                    r.kind,
                    r.display_name or "-",
                    r.team or "-",
                    f"{r.total:.3f}",
                    f"{r.last_24h:.3f}",
                    f"{r.last_7d:.3f}",
                    r.forfeited or "",
                )
                for r in rows
            ],
        )
    )
    return 0


def add_credits_command(
    commands: Any, open_store: Callable[[argparse.Namespace], Database]
) -> None:
    """Register ``credits list`` on meshnet-tracker's subcommands."""
    parser = commands.add_parser("credits", help="credit earned by contributors (leaderboard)")
    actions = parser.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="the leaderboard, best first")
    listing.add_argument("--db", help="SQLAlchemy URL (default: SQLite in the data folder)")
    listing.add_argument(
        "--kind",
        choices=credit_policy.KINDS,
        default="account",
        help="rank accounts (unlinked identities stand alone), identities or teams",
    )
    listing.add_argument("--limit", type=int, default=50, help="rows to show (default 50)")
    listing.add_argument("--json", action="store_true", help="print the rows as JSON")

    def run(args: argparse.Namespace) -> int:
        database = open_store(args)
        try:
            return cmd_list(args, database)
        finally:
            database.dispose()

    listing.set_defaults(func=run)
