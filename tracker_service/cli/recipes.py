"""meshnet-tracker recipes [list] | revoke FINGERPRINT --reason R | unrevoke FINGERPRINT --reason R.

The operator's hand on the certification ledger. A revoked recipe is dark and the
certifier never certifies it again until ``unrevoke`` lifts the revocation; then
it is certified again only by a fresh real forward. FINGERPRINT is
``<model artifact digest>/<runtime recipe digest>`` as ``recipes`` lists it: each
half may be a prefix (at least 6 hex characters) naming exactly one recipe.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from tracker_service.errors import CliRefusal
from tracker_service.store.db import Database
from tracker_service.store.ledger import Key, lift_revocation, list_recipes, revoke_certification

MIN_PREFIX = 6
_HALF = re.compile(rf"^[0-9a-f]{{{MIN_PREFIX},64}}$")
UNKNOWN_RECIPE = "unknown-recipe"
AMBIGUOUS_RECIPE = "ambiguous-recipe"
BAD_FINGERPRINT = "bad-fingerprint"


def parse_fingerprint(text: str) -> tuple[str, str]:
    halves = text.strip().lower().split("/")
    if len(halves) != 2 or not all(_HALF.match(h) for h in halves):
        raise CliRefusal(
            f"{text!r} is not a fingerprint: give <artifact digest>/<recipe digest> as "
            f"`meshnet-tracker recipes` lists them (each at least {MIN_PREFIX} hex characters)",
            BAD_FINGERPRINT,
        )
    return halves[0], halves[1]


def resolve_key(database: Database, text: str) -> Key:
    """The one recipe whose digests start with the two halves of ``text``."""
    artifact, recipe = parse_fingerprint(text)
    with database.session() as session:
        matches = [
            (r.model_artifact_digest, r.runtime_recipe_digest)
            for r in list_recipes(session)
            if r.model_artifact_digest.startswith(artifact)
            and r.runtime_recipe_digest.startswith(recipe)
        ]
    if not matches:
        raise CliRefusal(
            f"no recipe in the ledger has the fingerprint {text}; "
            "`meshnet-tracker recipes` lists them",
            UNKNOWN_RECIPE,
        )
    if len(matches) > 1:
        raise CliRefusal(
            f"{len(matches)} recipes start with {text}; give more of each digest",
            AMBIGUOUS_RECIPE,
        )
    return matches[0]


@dataclass(frozen=True)
class _LedgerChange:
    """``recipes revoke`` or ``recipes unrevoke``: they differ only in the ledger call and
    their sentences (``{fingerprint}`` as given, ``{recipe}`` the digests' short form)."""

    change: Callable[..., bool]
    refused: str
    done: str

    def __call__(self, args: argparse.Namespace, database: Database) -> int:
        key = resolve_key(database, args.fingerprint)
        with database.sessions.begin() as session:
            changed = self.change(session, key, reason=args.reason, now=time.time())
        if not changed:
            print(self.refused.format(fingerprint=args.fingerprint), file=sys.stderr)
            return 1
        print(self.done.format(recipe=f"{key[0][:12]}/{key[1][:12]}"))
        return 0


cmd_revoke = _LedgerChange(
    revoke_certification,
    refused="recipe {fingerprint} is revoked already",
    done="recipe {recipe} revoked: dark, and not certified again until "
    "`meshnet-tracker recipes unrevoke` lifts it",
)
cmd_unrevoke = _LedgerChange(
    lift_revocation,
    refused="recipe {fingerprint} is not revoked",
    done="revocation of {recipe} lifted: dark until the certifier "
    "certifies it again with a fresh forward",
)


def add_recipe_actions(
    recipes: argparse.ArgumentParser,
    store_for: Callable[[argparse.Namespace], Database],
    list_command: Callable[[argparse.Namespace], int],
) -> None:
    """``list`` (also the default), ``revoke`` and ``unrevoke`` under ``recipes``."""
    actions = recipes.add_subparsers(dest="recipes_action")

    def run(command: Callable[[argparse.Namespace, Database], int]) -> Callable[..., int]:
        def with_store(args: argparse.Namespace) -> int:
            database = store_for(args)
            try:
                return command(args, database)
            finally:
                database.dispose()

        return with_store

    listing = actions.add_parser("list", help="the ledger (the default)")
    listing.set_defaults(func=list_command)
    for name, command, helptext in (
        ("revoke", cmd_revoke, "send a recipe dark and keep it so until unrevoked"),
        ("unrevoke", cmd_unrevoke, "lift a revocation (the recipe must certify again)"),
    ):
        sub = actions.add_parser(name, help=helptext)
        # Also after the action; SUPPRESS keeps a --db given before it.
        sub.add_argument("--db", default=argparse.SUPPRESS, help="SQLAlchemy URL")
        sub.add_argument("fingerprint", help="<artifact digest>/<recipe digest> (prefixes)")
        sub.add_argument("--reason", required=True, help="why, kept in the ledger")
        sub.set_defaults(func=run(command))
