"""`meshnet-node join LINK`: join a network with an invite, for a computer without a screen.

Afterwards `meshnet-node run` (no --tracker) serves on the joined network.
"""

from __future__ import annotations

import argparse

from app.cli.arguments import add_ca_file_argument
from app.cli.node_identity import add_identity_arguments
from core.identity.keystore import DEFAULT_PROFILE, load_or_create_identity
from core.network.invites import join_network, parse_invite_link
from core.network.joined_network import save_joined_network


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    join = subparsers.add_parser(
        "join", help="join a network with an invite link (meshnet://join?...)"
    )
    join.add_argument("link", help="the invite link, in quotes: 'meshnet://join?tracker=...'")
    add_ca_file_argument(join)
    add_identity_arguments(join)
    join.set_defaults(func=join_with_invite)


def join_with_invite(args: argparse.Namespace) -> int:
    parse_invite_link(args.link)  # a bad link is refused before any key is made
    identity = load_or_create_identity(args.profile, args.identity_file)
    joined = join_network(args.link, identity, ca_file=args.ca_file)
    save_joined_network(args.profile, joined)
    by = f", run by {joined.operator}" if joined.operator else ""
    print(f"Joined {joined.name or 'the network'}{by} ({joined.tracker_url}).")
    profile = "" if args.profile == DEFAULT_PROFILE else f" --profile {args.profile}"
    print(f"Start contributing with: meshnet-node run{profile}")
    return 0
