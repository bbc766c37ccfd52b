"""add | list | revoke for the tracker's hashed secrets: join tokens, API keys, submitter tokens.

Each kind is stored hashed and shown once, when it is issued
(store/hashed_secrets.py); the commands differ only in their noun, their
``HashedSecrets`` and a few extra columns or options. Adding a kind is one
``SecretKind`` and one ``add_secret_command`` call.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tracker_service.cli.errors import CliRefusal, report
from tracker_service.cli.table import table, when
from tracker_service.store.db import Database
from tracker_service.store.hashed_secrets import HashedSecrets

Column = tuple[str, Callable[[Any], str]]


@dataclass(frozen=True)
class SecretKind:
    command: str  # meshnet-tracker <command> add|list|revoke
    noun: str  # "join token", as the messages name one
    help: str
    store: HashedSecrets[Any]  # the table and prefix (store/hashed_secrets.py)
    empty: str  # what `list` says when there is none, with the command that adds one
    extra_columns: Sequence[Column] = field(default_factory=tuple)
    add_options: Callable[[argparse.ArgumentParser], None] | None = None
    # Columns `add` fills from its options (add_options), beyond label and time.
    issue_fields: Callable[[argparse.Namespace], dict[str, Any]] = lambda _args: {}


def _label(text: str) -> str:
    if len(text) > 256 or "\x00" in text:
        raise argparse.ArgumentTypeError(
            f"a label is at most 256 plain characters, got {len(text)}"
        )
    return text


def run_secret_command(
    kind: SecretKind, args: argparse.Namespace, open_store: Callable[[], Database]
) -> int:
    database = open_store()
    try:
        if args.action == "add":
            label = args.label or ""
            with database.sessions.begin() as session:
                row, secret = kind.store.issue(
                    session, label=label, now=time.time(), **kind.issue_fields(args)
                )
                secret_id = row.id
            print(f"{kind.noun} {secret_id} ({label or 'no label'}); shown once, keep it:")
            print(secret)
        elif args.action == "list":
            with database.session() as session:
                listed = [_row(kind, item) for item in kind.store.listed(session)]
            if not listed:
                print(kind.empty)
            else:
                headers = ("ID", "LABEL", "CREATED", "STATE", *(h for h, _ in kind.extra_columns))
                print(table(headers, listed))
        else:
            with database.sessions.begin() as session:
                revoked = kind.store.revoke(session, args.secret_id, now=time.time())
            if not revoked:
                report(CliRefusal(f"no active {kind.noun} with id {args.secret_id}", "not-found"))
                return 1
            print(f"{kind.noun} {args.secret_id} revoked")
    finally:
        database.dispose()
    return 0


def _row(kind: SecretKind, item: Any) -> tuple[str, ...]:
    state = "revoked " + when(item.revoked_at) if item.revoked_at else "active"
    base = (str(item.id), item.label or "-", when(item.created_at), state)
    return base + tuple(cell(item) for _, cell in kind.extra_columns)


def add_secret_command(
    commands: Any,
    kind: SecretKind,
    open_store: Callable[[argparse.Namespace], Database],
) -> None:
    """Register ``<kind.command> add|list|revoke`` on meshnet-tracker's subcommands."""
    parser = commands.add_parser(kind.command, help=kind.help)
    actions = parser.add_subparsers(dest="action", required=True)

    def with_db(sub: argparse.ArgumentParser) -> argparse.ArgumentParser:
        sub.add_argument("--db", help="SQLAlchemy URL (default: SQLite in the data folder)")
        return sub

    add = with_db(actions.add_parser("add", help=f"issue a {kind.noun} (shown once)"))
    add.add_argument("--label", type=_label, help="who it is for (at most 256 characters)")
    if kind.add_options is not None:
        kind.add_options(add)
    with_db(actions.add_parser("list", help=f"list {kind.noun}s"))
    revoke = with_db(actions.add_parser("revoke", help=f"revoke a {kind.noun}"))
    revoke.add_argument("secret_id", type=int, metavar="id")
    parser.set_defaults(func=lambda args: run_secret_command(kind, args, lambda: open_store(args)))
