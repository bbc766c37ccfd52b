"""meshnet-tracker: serve | recipes | tokens | keys | jobs | submitters (each add|list|...)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from tracker_service.backup_cli import add_backup_commands
from tracker_service.check_db_cli import add_check_db_command
from tracker_service.cli_errors import explain, require_existing_sqlite
from tracker_service.config import Settings
from tracker_service.jobs_cli import add_jobs_commands
from tracker_service.store.api_keys import add_api_key, list_api_keys, revoke_api_key
from tracker_service.store.db import Database
from tracker_service.store.ledger import list_recipes
from tracker_service.store.tokens import add_join_token, list_join_tokens, revoke_join_token


def _settings(args: argparse.Namespace) -> Settings:
    overrides = {
        name: getattr(args, name)
        for name in ("host", "port", "db", "capability_max_age_s")
        if getattr(args, name, None) is not None
    }
    if getattr(args, "allow_private_endpoints", False):
        overrides["allow_private_endpoints"] = True
    return Settings(**overrides)


def _open_store(settings: Settings) -> Database:
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    database = Database(settings.database_url())
    database.migrate()
    return database


def _when(ts: float | None) -> str:
    if ts is None:
        return "-"
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(c)) for c in column) for column in zip(headers, *rows, strict=False)]
    lines = [
        "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    head = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    return "\n".join([head, "  ".join("-" * w for w in widths), *lines])


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from tracker_service.app import create_app, load_key

    settings = _settings(args)
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(levelname)s %(name)s %(message)s"
    )
    common: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "log_level": settings.log_level,
        "access_log": args.access_log,
    }
    if args.workers <= 1:
        uvicorn.run(create_app(settings), **common)
        return 0
    # Several processes on one port: each is a replica over the same database. The
    # schema and the key are made here first, so the workers only read them.
    _open_store(settings).dispose()
    load_key(settings)
    for name in ("host", "port", "db", "capability_max_age_s"):
        value = getattr(args, name, None)
        if value is not None:
            os.environ[f"MESHNET_TRACKER_{name.upper()}"] = str(value)
    if settings.allow_private_endpoints:
        os.environ["MESHNET_TRACKER_ALLOW_PRIVATE_ENDPOINTS"] = "true"
    uvicorn.run("tracker_service.app:app_from_env", factory=True, workers=args.workers, **common)
    return 0


def cmd_recipes(args: argparse.Namespace) -> int:
    settings = _settings(args)
    if args.db:  # a named database must exist: a typo must not read as an empty ledger
        require_existing_sqlite(settings.database_url())
    database = _open_store(settings)
    with database.session() as session:
        rows = list_recipes(session)
        table = [
            (
                r.status,
                r.recipe_id,
                r.recipe_version,
                r.artifact_id,
                r.model_artifact_digest[:12],
                r.runtime_recipe_digest[:12],
                _when(r.certified_at),
                r.certified_route_session or "-",
                str(r.certified_node_count) if r.certified_node_count is not None else "-",
            )
            for r in rows
        ]
    database.dispose()
    if not table:
        print("The ledger is empty: no node has registered a recipe yet.")
        return 0
    headers = (
        "STATUS",
        "RECIPE",
        "VERSION",
        "MODEL",
        "ARTIFACT",
        "RECIPE DIGEST",
        "CERTIFIED",
        "ROUTE SESSION",
        "NODES",
    )
    print(_table(headers, table))
    return 0


def cmd_tokens(args: argparse.Namespace) -> int:
    database = _open_store(_settings(args))
    try:
        if args.action == "add":
            with database.sessions.begin() as session:
                row, token = add_join_token(session, label=args.label or "", now=time.time())
                token_id = row.id
            print(f"join token {token_id} ({args.label or 'no label'}); shown once, keep it:")
            print(token)
        elif args.action == "list":
            with database.session() as session:
                rows = [
                    (
                        str(t.id),
                        t.label or "-",
                        _when(t.created_at),
                        "revoked " + _when(t.revoked_at) if t.revoked_at else "active",
                        str(t.uses),
                    )
                    for t in list_join_tokens(session)
                ]
            if not rows:
                print("No join tokens; add one with `meshnet-tracker tokens add --label NAME`.")
            else:
                print(_table(("ID", "LABEL", "CREATED", "STATE", "USES"), rows))
        else:
            with database.sessions.begin() as session:
                revoked = revoke_join_token(session, args.token_id, now=time.time())
            if not revoked:
                print(f"no active join token with id {args.token_id}", file=sys.stderr)
                return 1
            print(f"join token {args.token_id} revoked")
    finally:
        database.dispose()
    return 0


def cmd_keys(args: argparse.Namespace) -> int:
    """Gateway API keys: with any active key, /v1 needs 'Authorization: Bearer <key>'."""
    database = _open_store(_settings(args))
    try:
        if args.action == "add":
            with database.sessions.begin() as session:
                row, key = add_api_key(
                    session,
                    label=args.label or "",
                    now=time.time(),
                    requests_per_minute=args.requests_per_minute,
                    tokens_per_minute=args.tokens_per_minute,
                )
                key_id = row.id
            print(f"API key {key_id} ({args.label or 'no label'}); shown once, keep it:")
            print(key)
        elif args.action == "list":
            with database.session() as session:
                rows = [
                    (
                        str(k.id),
                        k.label or "-",
                        _when(k.created_at),
                        "revoked " + _when(k.revoked_at) if k.revoked_at else "active",
                        _when(k.last_used_at),
                        str(k.requests_per_minute or "default"),
                        str(k.tokens_per_minute or "default"),
                    )
                    for k in list_api_keys(session)
                ]
            if not rows:
                print(
                    "No API keys: the gateway answers only on loopback. Add one with "
                    "`meshnet-tracker keys add --label NAME`."
                )
            else:
                headers = ("ID", "LABEL", "CREATED", "STATE", "LAST USED", "REQ/MIN", "TOK/MIN")
                print(_table(headers, rows))
        else:
            with database.sessions.begin() as session:
                revoked = revoke_api_key(session, args.key_id, now=time.time())
            if not revoked:
                print(f"no active API key with id {args.key_id}", file=sys.stderr)
                return 1
            print(f"API key {args.key_id} revoked")
    finally:
        database.dispose()
    return 0


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"a limit is at least 1, got {value}")
    return value


def _label(text: str) -> str:
    if len(text) > 256 or "\x00" in text:
        raise argparse.ArgumentTypeError(
            f"a label is at most 256 plain characters, got {len(text)}"
        )
    return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="meshnet-tracker", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    def with_db(sub: argparse.ArgumentParser) -> argparse.ArgumentParser:
        sub.add_argument("--db", help="SQLAlchemy URL (default: SQLite in the data folder)")
        return sub

    serve = with_db(commands.add_parser("serve", help="run the tracker"))
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument("--access-log", action="store_true", help="log every request")
    serve.add_argument(
        "--capability-max-age-s",
        type=float,
        help="refuse capability reports older than this many seconds (default 900)",
    )
    serve.add_argument(
        "--allow-private-endpoints",
        action="store_true",
        help="dial nodes on loopback, private and link-local addresses (demo, LAN); "
        "a public tracker leaves this off",
    )
    serve.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes on the port, each a replica over the database (default 1)",
    )
    serve.set_defaults(func=cmd_serve)

    recipes = with_db(commands.add_parser("recipes", help="the certification ledger"))
    recipes.set_defaults(func=cmd_recipes)

    tokens = commands.add_parser("tokens", help="join tokens of a private network")
    actions = tokens.add_subparsers(dest="action", required=True)
    add = with_db(actions.add_parser("add", help="issue a join token (shown once)"))
    add.add_argument("--label", type=_label, help="who the token is for (at most 256 chars)")
    with_db(actions.add_parser("list", help="list join tokens"))
    revoke = with_db(actions.add_parser("revoke", help="revoke a join token"))
    revoke.add_argument("token_id", type=int)
    tokens.set_defaults(func=cmd_tokens)
    add_jobs_commands(commands)
    add_backup_commands(commands, _settings)
    add_check_db_command(commands, _settings)

    keys = commands.add_parser("keys", help="API keys of the OpenAI-compatible gateway")
    key_actions = keys.add_subparsers(dest="action", required=True)
    key_add = with_db(key_actions.add_parser("add", help="issue an API key (shown once)"))
    key_add.add_argument("--label", type=_label, help="who the key is for (at most 256 chars)")
    key_add.add_argument(
        "--requests-per-minute", type=_positive, help="this key's limit (default: the tracker's)"
    )
    key_add.add_argument(
        "--tokens-per-minute", type=_positive, help="this key's limit (default: the tracker's)"
    )
    with_db(key_actions.add_parser("list", help="list API keys"))
    key_revoke = with_db(key_actions.add_parser("revoke", help="revoke an API key"))
    key_revoke.add_argument("key_id", type=int)
    keys.set_defaults(func=cmd_keys)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except Exception as exc:
        refusal = explain(exc, getattr(args, "db", None))
        if refusal is None:
            raise
        print(f"meshnet-tracker: {refusal} [{refusal.reason}]", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
