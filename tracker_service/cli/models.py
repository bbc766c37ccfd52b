"""meshnet-tracker models [list] | allow NAME DIGEST | deny NAME DIGEST, and serve's options.

Certification proves that nodes answer, not that their weights are the model their
name says: two colluding identities can certify a fake under a popular name. So the
gateway serves a model name only from sources (model artifact digests) the operator
allowed here; any other source under that name stays unserved and the status page
says so (store/model_sources.py). DIGEST is the artifact digest as ``models`` lists
it: a prefix of at least 6 hex characters naming one source registered under NAME,
or all 64 for weights no node has registered yet.

A private network where the operator runs every node starts ``serve
--trust-first-model-source``: the first source certified under each name is
allowed by itself. ``serve --allow-model-source NAME=DIGEST`` allows one at start.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from typing import Any

from tracker_service.cli.table import table, when
from tracker_service.domain.recipe_identity import STATUS_CERTIFIED
from tracker_service.errors import CliRefusal
from tracker_service.store.db import Database
from tracker_service.store.ledger import list_recipes
from tracker_service.store.model_sources import (
    SOURCE_ALLOWED,
    list_sources,
    set_source,
    status_of,
)

MIN_PREFIX = 6
_DIGEST = re.compile(r"^[0-9a-f]{6,64}$")
_ALLOW_OPTION = re.compile(r"^[^=,\s]+=[0-9a-f]{12,64}$")
UNKNOWN_SOURCE = "unknown-model-source"
AMBIGUOUS_SOURCE = "ambiguous-model-source"
BAD_SOURCE = "bad-model-source"


def resolve_source(database: Database, name: str, digest: str) -> str:
    """The one artifact digest under ``name`` that starts with ``digest`` (a full digest
    may name weights no node has registered yet)."""
    digest = digest.strip().lower()
    if not _DIGEST.match(digest):
        raise CliRefusal(
            f"{digest!r} is not an artifact digest: give at least {MIN_PREFIX} hex characters "
            "of the ARTIFACT column `meshnet-tracker models` lists",
            BAD_SOURCE,
        )
    with database.session() as session:
        known = {r.model_artifact_digest for r in list_recipes(session) if r.artifact_id == name}
    matches = sorted(d for d in known if d.startswith(digest))
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise CliRefusal(
            f"{len(matches)} sources of {name} start with {digest}; give more of the digest",
            AMBIGUOUS_SOURCE,
        )
    if len(digest) == 64:
        return digest
    raise CliRefusal(
        f"no node has registered {name} with weights {digest}…; `meshnet-tracker models` "
        "lists the sources, or give all 64 hex characters to allow weights in advance",
        UNKNOWN_SOURCE,
    )


def cmd_list(args: argparse.Namespace, database: Database) -> int:
    with database.session() as session:
        decided = {(v.artifact_id, v.model_artifact_digest): v for v in list_sources(session)}
        statuses = {key: v.status for key, v in decided.items()}
        seen: dict[tuple[str, str], bool] = {}
        for r in list_recipes(session):
            key = (r.artifact_id, r.model_artifact_digest)
            seen[key] = seen.get(key, False) or r.status == STATUS_CERTIFIED
    keys = sorted(set(seen) | set(decided))
    if not keys:
        print("No model source yet: no node has registered a model, none was allowed.")
        return 0
    rows = []
    for name, digest in keys:
        status = status_of(statuses, name, digest)
        certified = seen.get((name, digest), False)
        view = decided.get((name, digest))
        rows.append(
            (
                name,
                digest[:12],
                status,
                "yes" if certified else "no",
                "serving" if certified and status == SOURCE_ALLOWED else "unserved",
                when(view.changed_at) if view else "-",
                view.note if view and view.note else "-",
            )
        )
    headers = ("MODEL", "ARTIFACT", "SOURCE", "CERTIFIED", "GATEWAY", "DECIDED", "NOTE")
    print(table(headers, rows))
    return 0


def _decide(allowed: bool) -> Callable[[argparse.Namespace, Database], int]:
    def command(args: argparse.Namespace, database: Database) -> int:
        digest = resolve_source(database, args.name, args.digest)
        note = args.note or ("allowed" if allowed else "denied") + " by the operator"
        with database.sessions.begin() as session:
            changed = set_source(
                session, args.name, digest, allowed=allowed, note=note, now=time.time()
            )
        word = "allowed" if allowed else "denied"
        if not changed:
            print(f"{args.name} from {digest[:12]} is {word} already", file=sys.stderr)
            return 1
        if allowed:
            print(f"{args.name} from {digest[:12]} allowed: the gateway serves it once certified")
        else:
            print(f"{args.name} from {digest[:12]} denied: the gateway never serves it")
        return 0

    return command


def add_models_command(commands: Any, store_for: Callable[[argparse.Namespace], Database]) -> None:
    """``models`` (list by default), ``models allow`` and ``models deny``."""
    models = commands.add_parser(
        "models", help="which weights may serve under each model name: list, allow, deny"
    )
    models.add_argument("--db", help="SQLAlchemy URL (default: SQLite in the data folder)")

    def run(command: Callable[[argparse.Namespace, Database], int]) -> Callable[..., int]:
        def with_store(args: argparse.Namespace) -> int:
            database = store_for(args)
            try:
                return command(args, database)
            finally:
                database.dispose()

        return with_store

    models.set_defaults(func=run(cmd_list))
    actions = models.add_subparsers(dest="models_action")
    listing = actions.add_parser("list", help="every source and whether it serves (default)")
    listing.add_argument("--db", default=argparse.SUPPRESS, help="SQLAlchemy URL")
    listing.set_defaults(func=run(cmd_list))
    for name, allowed, helptext in (
        ("allow", True, "serve this name from these weights"),
        ("deny", False, "never serve this name from these weights"),
    ):
        sub = actions.add_parser(name, help=helptext)
        sub.add_argument("--db", default=argparse.SUPPRESS, help="SQLAlchemy URL")
        sub.add_argument("name", help="the model name (artifact id), e.g. smollm2-135m-instruct")
        sub.add_argument("digest", help="its artifact digest (a prefix `models` lists)")
        sub.add_argument("--note", default="", help="why, kept with the decision")
        sub.set_defaults(func=run(_decide(allowed)))


def add_serve_options(serve: argparse.ArgumentParser) -> None:
    serve.add_argument(
        "--allow-model-source",
        action="append",
        metavar="NAME=DIGEST",
        help="serve NAME from weights whose artifact digest starts with DIGEST (12+ hex); "
        "repeat for several (also `meshnet-tracker models allow`)",
    )
    serve.add_argument(
        "--trust-first-model-source",
        action="store_true",
        help="a private network where you run every node: the first weights certified under "
        "each model name serve without `models allow` (any other source stays unserved)",
    )
    serve.add_argument(
        "--trust-lone-ranges",
        action="store_true",
        help="a private network where you run every node: layers only one node holds serve "
        "users though no other node can check them (a public tracker waits for a second)",
    )


def serve_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The settings serve's model-source options give (none when absent)."""
    overrides: dict[str, Any] = {}
    given = getattr(args, "allow_model_source", None) or []
    for item in given:
        if not _ALLOW_OPTION.match(item.strip().lower()):
            raise CliRefusal(
                f"--allow-model-source {item!r} is not NAME=DIGEST (the model name, '=', and "
                "at least 12 hex characters of its artifact digest)",
                BAD_SOURCE,
            )
    if given:
        overrides["allowed_model_sources"] = ",".join(i.strip() for i in given)
    if getattr(args, "trust_first_model_source", False):
        overrides["trust_first_model_source"] = True
    if getattr(args, "trust_lone_ranges", False):
        overrides["trust_lone_ranges"] = True
    return overrides
