"""``meshnet-tracker invite create | list | revoke``: invites to this network.

An invite is a hashed secret like a join token, and `list` and `revoke` are theirs
(``cli/secrets.py``); but it is shared as a link that also names the tracker and its
key, so `create` prints the code, the ``meshnet://join`` link and the invite page, and
`revoke` takes the code (or the id).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

from tracker_service.cli.secrets import SecretKind, _label, add_list_revoke, list_or_revoke, with_db
from tracker_service.cli.table import when
from tracker_service.config import Settings
from tracker_service.domain.invite_links import invite_links, parse_duration, tracker_url_problem
from tracker_service.domain.keys import TrackerKey
from tracker_service.errors import CliRefusal
from tracker_service.store.db import Database
from tracker_service.store.invites import INVITES, add_invite, invite_state

DEFAULT_EXPIRY = "7d"
MAX_USES = 1_000_000

INVITE_KIND = SecretKind(
    command="invite",
    noun="invite",
    help="invites that let a computer join this network",
    store=INVITES,
    empty="No invites; make one with `meshnet-tracker invite create --label NAME`.",
    leading_columns=(
        ("EXPIRES", lambda item: when(item.expires_at)),
        ("USES", lambda item: f"{item.uses}/{item.max_uses}"),
    ),
    state=invite_state,
    revoke_by_text=True,
    revoked_note="; computers that already joined with it stay joined",
)


def _uses(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_USES:
        raise argparse.ArgumentTypeError(
            f"--uses is how many computers may join with the invite: 1 to {MAX_USES}, got {text!r}"
        )
    return value


def _expiry(text: str) -> float | None:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def tracker_key(settings: Settings) -> TrackerKey:
    """The key the tracker serves with; never made here (an invite naming a key the
    tracker does not hold would refuse every joiner)."""
    if settings.signing_key:
        return TrackerKey.from_seed_b64(settings.signing_key)
    path = settings.key_path()
    if not path.exists():
        raise CliRefusal(
            f"there is no tracker key at {path} yet, so an invite cannot name it: start the "
            "tracker once (`meshnet-tracker serve`), or set MESHNET_TRACKER_DATA_DIR to the "
            "data folder of the tracker that serves this network",
            "no-tracker-key",
        )
    return TrackerKey.load_or_create(path)


def _own_url(args: argparse.Namespace, settings: Settings) -> str:
    url = (args.tracker_url or settings.own_url()).rstrip("/")
    problem = tracker_url_problem(url)
    if problem is not None:
        raise CliRefusal(
            f"{problem}; pass --tracker-url with the URL people reach this tracker at "
            "(or set MESHNET_TRACKER_PUBLIC_URL)",
            "bad-tracker-url",
        )
    return url


def cmd_create(args: argparse.Namespace, settings: Settings, database: Database) -> int:
    url = _own_url(args, settings)
    key = tracker_key(settings)
    now = time.time()
    expires_at = None if args.expires_in is None else now + args.expires_in
    with database.sessions.begin() as session:
        row, code = add_invite(
            session, label=args.label or "", now=now, max_uses=args.uses, expires_at=expires_at
        )
        invite_id = row.id
    links = invite_links(url, code, key.fingerprint)
    if args.json:
        print(json.dumps(links.as_dict()))
        return 0
    uses = "1 computer" if args.uses == 1 else f"{args.uses} computers"
    until = "never expires" if expires_at is None else f"expires {when(expires_at)}"
    print(f"invite {invite_id} ({args.label or 'no label'}) for {uses}, {until}; shown once:")
    print(f"  code: {links.code}")
    print(f"  link: {links.link}")
    print(f"  page: {links.page}")
    return 0


def add_invite_commands(
    commands: Any,
    settings_for: Callable[[argparse.Namespace], Settings],
    open_store: Callable[[argparse.Namespace], Database],
) -> None:
    """Register ``invite create|list|revoke`` on meshnet-tracker's subcommands."""
    parser = commands.add_parser(INVITE_KIND.command, help=INVITE_KIND.help)
    actions = parser.add_subparsers(dest="action", required=True)

    create = with_db(actions.add_parser("create", help="make an invite (its code shown once)"))
    create.add_argument("--label", type=_label, help="who it is for (at most 256 characters)")
    create.add_argument(
        "--uses", type=_uses, default=1, help="how many computers may join with it (default 1)"
    )
    create.add_argument(
        "--expires-in",
        type=_expiry,
        default=parse_duration(DEFAULT_EXPIRY),
        metavar="DURATION",
        help=f"e.g. 12h, 7d, 2w or never (default {DEFAULT_EXPIRY})",
    )
    create.add_argument(
        "--tracker-url",
        help="the URL people reach this tracker at (default: MESHNET_TRACKER_PUBLIC_URL, "
        "else http://host:port of the settings)",
    )
    create.add_argument("--json", action="store_true", help='print {"code", "link", "page"}')
    add_list_revoke(actions, INVITE_KIND)

    def run(args: argparse.Namespace) -> int:
        settings = settings_for(args)
        database = open_store(args)
        try:
            if args.action == "create":
                return cmd_create(args, settings, database)
            return list_or_revoke(INVITE_KIND, args, database)
        finally:
            database.dispose()

    parser.set_defaults(func=run)
