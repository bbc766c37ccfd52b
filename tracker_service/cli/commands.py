"""meshnet-tracker: run the tracker (serve) or a relay, read its ledger (recipes), manage tokens,
keys, submitters and jobs, and back up, restore or check its database."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Sequence
from typing import Any

from tracker_service.cli.backup import add_backup_commands
from tracker_service.cli.check_db import add_check_db_command
from tracker_service.cli.credits import add_credits_command
from tracker_service.cli.errors import explain, report, require_existing_sqlite
from tracker_service.cli.hosting import (
    HOSTING_SETTINGS,
    add_hosting_options,
    check_tls_files,
    uvicorn_hosting_options,
)
from tracker_service.cli.invites import add_invite_commands
from tracker_service.cli.jobs import SUBMITTERS, add_jobs_commands
from tracker_service.cli.models import add_models_command
from tracker_service.cli.models import add_serve_options as add_model_serve_options
from tracker_service.cli.models import serve_overrides as model_serve_overrides
from tracker_service.cli.network import NETWORK_SETTINGS, add_network_options
from tracker_service.cli.ollama_port import (
    add_ollama_port_option,
    check_ollama_port,
    serve_with_ollama_port,
)
from tracker_service.cli.recipes import add_recipe_actions
from tracker_service.cli.secrets import SecretKind, add_secret_command
from tracker_service.cli.serve_lock import hold_while_serving, release_serve_lock
from tracker_service.cli.table import table, when
from tracker_service.config import Settings
from tracker_service.errors import CliRefusal
from tracker_service.relay.cli import add_relay_command
from tracker_service.store.api_keys import API_KEYS as API_KEY_SECRETS
from tracker_service.store.db import Database
from tracker_service.store.ledger import list_recipes
from tracker_service.store.tokens import JOIN_TOKENS as JOIN_TOKEN_SECRETS


def _settings(args: argparse.Namespace) -> Settings:
    overrides = {
        name: getattr(args, name)
        for name in ("host", "port", "db", "capability_max_age_s", *NETWORK_SETTINGS)
        if getattr(args, name, None) is not None
    }
    overrides.update(
        (name, getattr(args, name)) for name in HOSTING_SETTINGS if getattr(args, name, None)
    )
    if getattr(args, "allow_private_endpoints", False):
        overrides["allow_private_endpoints"] = True
    if getattr(args, "allow_plaintext_nodes", False):
        overrides["allow_plaintext_nodes"] = True
    if getattr(args, "relay_url", None):
        overrides["relay_urls"] = ",".join(args.relay_url)
    if getattr(args, "no_embedded_relay", False):
        overrides["embedded_relay"] = False
    overrides.update(model_serve_overrides(args))
    if getattr(args, "ollama_port", None):
        overrides["ollama_port"] = args.ollama_port
    return Settings(**overrides)


def _open_store(settings: Settings) -> Database:
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    database = Database(settings.database_url())
    database.migrate()
    return database


def _store_for(args: argparse.Namespace) -> Database:
    """The database a token or key command works on; only `add` may create one."""
    settings = _settings(args)
    if args.db and args.action not in ("add", "create"):  # a typo must not read as "no tokens"
        require_existing_sqlite(settings.database_url())
    return _open_store(settings)


def _ledger_store(args: argparse.Namespace) -> Database:
    """The ledger a `recipes` action changes: a named database must exist."""
    settings = _settings(args)
    if args.db:
        require_existing_sqlite(settings.database_url())
    return _open_store(settings)


def _require_free_port(host: str, port: int) -> None:
    """Refuse a port another program listens on, in the command's own words (uvicorn
    would log a bare errno after start-up and exit 3)."""
    if port == 0:
        return
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except OSError:
        return  # an unresolvable --host: uvicorn says so itself
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as exc:
            raise CliRefusal(
                f"cannot listen on {host}:{port} ({exc.strerror or exc}); another program, "
                "perhaps another tracker, uses it: stop that one or pass another --port",
                "port-in-use",
            ) from exc


def cmd_serve(args: argparse.Namespace) -> int:
    settings = _settings(args)
    check_tls_files(settings)
    _require_free_port(settings.host, settings.port)
    check_ollama_port(settings.ollama_port, settings.port, args.workers)
    if settings.ollama_port:
        _require_free_port(settings.host, settings.ollama_port)
    hold_while_serving(settings.database_url())  # `restore` refuses while it is held
    before = _release_before_dying_of(signal.SIGTERM)
    try:
        return _serve(args, settings)
    finally:
        release_serve_lock()  # a clean stop leaves no lock file (kill -9 does, unlocked)
        if before is not None:
            signal.signal(signal.SIGTERM, before)


def _release_before_dying_of(sig: signal.Signals) -> Any:
    """After a graceful shutdown uvicorn raises the signal that stopped it again, so the
    process dies of it and skips every ``finally``: drop the serve lock, then die of it.
    Returns the handler it replaced (None off the main thread, where none can be set)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def release_then_die(number: int, _frame: object) -> None:
        release_serve_lock()
        signal.signal(number, signal.SIG_DFL)
        signal.raise_signal(number)

    return signal.signal(sig, release_then_die)


def _serve(args: argparse.Namespace, settings: Settings) -> int:
    import uvicorn

    from tracker_service.app import create_app, load_key

    logging.basicConfig(
        level=settings.log_level.upper(), format="%(levelname)s %(name)s %(message)s"
    )
    # One INFO line per outgoing request (each reachability challenge) drowns the log.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    common: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "log_level": settings.log_level,
        "access_log": args.access_log,
        **uvicorn_hosting_options(settings),
    }
    if settings.ollama_port:
        serve_with_ollama_port(create_app(settings), common, settings.ollama_port)
        return 0
    if args.workers <= 1:
        uvicorn.run(create_app(settings), **common)
        return 0
    # Several processes on one port: each is a replica over the same database. The
    # schema and the key are made here first, so the workers only read them.
    _open_store(settings).dispose()
    load_key(settings)
    for name in ("host", "port", "db", "capability_max_age_s", *NETWORK_SETTINGS, "tls_cert"):
        value = getattr(args, name, None)
        if value is not None:
            os.environ[f"MESHNET_TRACKER_{name.upper()}"] = str(value)
    if settings.allow_private_endpoints:
        os.environ["MESHNET_TRACKER_ALLOW_PRIVATE_ENDPOINTS"] = "true"
    if settings.allow_plaintext_nodes:
        os.environ["MESHNET_TRACKER_ALLOW_PLAINTEXT_NODES"] = "true"
    os.environ["MESHNET_TRACKER_RELAY_URLS"] = settings.relay_urls
    os.environ["MESHNET_TRACKER_ALLOWED_MODEL_SOURCES"] = settings.allowed_model_sources
    if settings.trust_first_model_source:
        os.environ["MESHNET_TRACKER_TRUST_FIRST_MODEL_SOURCE"] = "true"
    if settings.trust_lone_ranges:
        os.environ["MESHNET_TRACKER_TRUST_LONE_RANGES"] = "true"
    embedded = settings.embedded_relay and not settings.relay_urls
    if embedded:
        # A node's link lands on one worker, its clients on any: an embedded relay
        # cannot span processes. Relays of their own can (`meshnet-tracker relay`).
        logging.getLogger(__name__).warning(
            "with --workers the tracker runs no relay of its own; nodes it cannot dial stay "
            "unreachable unless you run `meshnet-tracker relay` and pass --relay-url"
        )
    os.environ["MESHNET_TRACKER_EMBEDDED_RELAY"] = "false"
    uvicorn.run("tracker_service.app:app_from_env", factory=True, workers=args.workers, **common)
    return 0


def cmd_recipes(args: argparse.Namespace) -> int:
    settings = _settings(args)
    if args.db:  # a named database must exist: a typo must not read as an empty ledger
        require_existing_sqlite(settings.database_url())
    database = _open_store(settings)
    with database.session() as session:
        rows = list_recipes(session)
        listed = [
            (
                f"{r.status} (revoked)" if r.revoked_at is not None else r.status,
                r.recipe_id,
                r.recipe_version,
                r.artifact_id,
                r.model_artifact_digest[:12],
                r.runtime_recipe_digest[:12],
                when(r.certified_at),
                r.certified_route_session or "-",
                str(r.certified_node_count) if r.certified_node_count is not None else "-",
            )
            for r in rows
        ]
    database.dispose()
    if not listed:
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
    print(table(headers, listed))
    return 0


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"a limit is at least 1, got {value}")
    return value


JOIN_TOKENS = SecretKind(
    command="tokens",
    noun="join token",
    help="join tokens of a private network",
    store=JOIN_TOKEN_SECRETS,
    empty="No join tokens; add one with `meshnet-tracker tokens add --label NAME`.",
    extra_columns=(("USES", lambda token: str(token.uses)),),
)


def _key_limits(add: argparse.ArgumentParser) -> None:
    for option in ("--requests-per-minute", "--tokens-per-minute"):
        add.add_argument(option, type=_positive, help="this key's limit (default: the tracker's)")


# Gateway API keys: with any active key, /v1 needs 'Authorization: Bearer <key>'.
API_KEYS = SecretKind(
    command="keys",
    noun="API key",
    help="API keys of the OpenAI-compatible gateway",
    store=API_KEY_SECRETS,
    issue_fields=lambda args: {
        "requests_per_minute": args.requests_per_minute,
        "tokens_per_minute": args.tokens_per_minute,
    },
    empty="No API keys: the gateway answers only on loopback. "
    "Add one with `meshnet-tracker keys add --label NAME`.",
    extra_columns=(
        ("LAST USED", lambda key: when(key.last_used_at)),
        ("REQ/MIN", lambda key: str(key.requests_per_minute or "default")),
        ("TOK/MIN", lambda key: str(key.tokens_per_minute or "default")),
    ),
    add_options=_key_limits,
)


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
        "--allow-plaintext-nodes",
        action="store_true",
        help="development only: admit and route through nodes serving plaintext ws:// "
        "without a TLS pin (nodes started with --insecure-plaintext-dataplane)",
    )
    serve.add_argument(
        "--relay-url",
        action="append",
        help="a relay (ws://host:port/relay of `meshnet-tracker relay`) to offer nodes the "
        "tracker cannot dial; repeat for several (default: the tracker's own)",
    )
    serve.add_argument(
        "--no-embedded-relay",
        action="store_true",
        help="do not run a relay on the tracker's own port",
    )
    add_network_options(serve)
    add_hosting_options(serve)
    add_model_serve_options(serve)
    add_ollama_port_option(serve)
    serve.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes on the port, each a replica over the database (default 1)",
    )
    serve.set_defaults(func=cmd_serve)

    recipes = with_db(
        commands.add_parser("recipes", help="the certification ledger: list, revoke, unrevoke")
    )
    recipes.set_defaults(func=cmd_recipes)
    add_recipe_actions(recipes, _ledger_store, cmd_recipes)
    add_models_command(commands, _ledger_store)

    add_secret_command(commands, JOIN_TOKENS, _store_for)
    add_jobs_commands(commands)
    add_secret_command(commands, SUBMITTERS, _store_for)
    add_backup_commands(commands, _settings)
    add_relay_command(commands)
    add_check_db_command(commands, _settings)

    add_secret_command(commands, API_KEYS, _store_for)
    add_invite_commands(commands, _settings, _store_for)
    add_credits_command(commands, _ledger_store)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except Exception as exc:
        refusal = explain(exc, getattr(args, "db", None))
        if refusal is None:
            raise
        report(refusal)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
