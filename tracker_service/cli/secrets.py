"""add | list | revoke for the tracker's hashed secrets: join tokens, API keys, submitter
tokens, and list | revoke for invites (whose `create` is their own, cli/invites.py).

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

from tracker_service.cli.errors import report
from tracker_service.cli.table import table, when
from tracker_service.errors import CliRefusal
from tracker_service.store.db import Database
from tracker_service.store.hashed_secrets import HashedSecrets

Column = tuple[str, Callable[[Any], str]]


def revocation_state(item: Any, _now: float) -> str:
    """active, or revoked and when: the STATE of a kind that only ends by revocation."""
    return "revoked " + when(item.revoked_at) if item.revoked_at else "active"


@dataclass(frozen=True)
class SecretKind:
    command: str  # meshnet-tracker <command> add|list|revoke
    noun: str  # "join token", as the messages name one
    help: str
    store: HashedSecrets[Any]  # the table and prefix (store/hashed_secrets.py)
    empty: str  # what `list` says when there is none, with the command that adds one
    extra_columns: Sequence[Column] = field(default_factory=tuple)  # after STATE
    add_options: Callable[[argparse.ArgumentParser], None] | None = None
    # Columns `add` fills from its options (add_options), beyond label and time.
    issue_fields: Callable[[argparse.Namespace], dict[str, Any]] = lambda _args: {}
    # Invites: columns before STATE, a state of their own, and `revoke CODE` (or id).
    leading_columns: Sequence[Column] = field(default_factory=tuple)
    state: Callable[[Any, float], str] = revocation_state
    revoke_by_text: bool = False
    revoked_note: str = ""  # appended to "<noun> <id> revoked"


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
            return 0
        return list_or_revoke(kind, args, database)
    finally:
        database.dispose()


def list_or_revoke(kind: SecretKind, args: argparse.Namespace, database: Database) -> int:
    """`list` or `revoke`, the same for every kind (`add` differs: invites `create`)."""
    if args.action == "list":
        now = time.time()
        with database.session() as session:
            listed = [_row(kind, item, now) for item in kind.store.listed(session)]
        if not listed:
            print(kind.empty)
        else:
            headers = (
                "ID",
                "LABEL",
                "CREATED",
                *(h for h, _ in kind.leading_columns),
                "STATE",
                *(h for h, _ in kind.extra_columns),
            )
            print(table(headers, listed))
        return 0
    target: int | str = args.secret_id  # an id, or what was typed for a kind revoked by text
    if isinstance(target, str) and target.isdigit():
        target = int(target)
    which = f"with id {target}" if isinstance(target, int) else target
    with database.sessions.begin() as session:
        revoked = kind.store.revoke(session, target, now=time.time())
    if not revoked:
        report(CliRefusal(f"no active {kind.noun} {which}", "not-found"))
        return 1
    print(f"{kind.noun} {args.secret_id} revoked{kind.revoked_note}")
    return 0


def _row(kind: SecretKind, item: Any, now: float) -> tuple[str, ...]:
    base = (str(item.id), item.label or "-", when(item.created_at))
    leading = tuple(cell(item) for _, cell in kind.leading_columns)
    extra = tuple(cell(item) for _, cell in kind.extra_columns)
    return (*base, *leading, kind.state(item, now), *extra)


def _a(noun: str) -> str:
    return ("an " if noun[0] in "aeiouAEIOU" else "a ") + noun


def with_db(sub: argparse.ArgumentParser) -> argparse.ArgumentParser:
    sub.add_argument("--db", help="SQLAlchemy URL (default: SQLite in the data folder)")
    return sub


def add_list_revoke(actions: Any, kind: SecretKind) -> None:
    """The `list` and `revoke` actions of a kind, on its command's subparsers."""
    with_db(actions.add_parser("list", help=f"list {kind.noun}s"))
    revoke = with_db(actions.add_parser("revoke", help=f"revoke {_a(kind.noun)}"))
    if kind.revoke_by_text:
        revoke.add_argument("secret_id", metavar="CODE", help=f"the {kind.noun}'s code (or its id)")
    else:
        revoke.add_argument("secret_id", type=int, metavar="id")


def add_secret_command(
    commands: Any,
    kind: SecretKind,
    open_store: Callable[[argparse.Namespace], Database],
) -> None:
    """Register ``<kind.command> add|list|revoke`` on meshnet-tracker's subcommands."""
    parser = commands.add_parser(kind.command, help=kind.help)
    actions = parser.add_subparsers(dest="action", required=True)
    add = with_db(actions.add_parser("add", help=f"issue {_a(kind.noun)} (shown once)"))
    add.add_argument("--label", type=_label, help="who it is for (at most 256 characters)")
    if kind.add_options is not None:
        kind.add_options(add)
    add_list_revoke(actions, kind)
    parser.set_defaults(func=lambda args: run_secret_command(kind, args, lambda: open_store(args)))
