"""`meshnet-node identity show | rotate` — this node's key pair and node id."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.identity.keystore import (
    DEFAULT_PROFILE,
    key_store,
    load_or_create_identity,
    rotate_identity,
)


def add_identity_arguments(parser: argparse.ArgumentParser) -> None:
    """--profile / --identity-file, shared with the subcommands that sign as this node."""
    parser.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        help="node profile: one key per profile, so several nodes can run on one machine",
    )
    parser.add_argument(
        "--identity-file",
        type=Path,
        default=None,
        metavar="PATH",
        help="keep the private key in this file (mode 0600) instead of the OS keyring",
    )


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    identity = subparsers.add_parser("identity", help="this node's key pair and node id")
    verbs = identity.add_subparsers(dest="identity_command", required=True)
    show = verbs.add_parser("show", help="print the node id and public key (made on first run)")
    add_identity_arguments(show)
    show.set_defaults(func=show_identity)
    rotate = verbs.add_parser("rotate", help="replace the key pair: the node gets a new id")
    add_identity_arguments(rotate)
    rotate.set_defaults(func=rotate_key)


def _warn_about_file(args: argparse.Namespace) -> None:
    if args.identity_file is not None:
        print(
            f"warning: the private key is kept in the file {args.identity_file}; anyone who can "
            "read it can act as this node. Prefer the OS keyring where one is available.",
            file=sys.stderr,
        )


def show_identity(args: argparse.Namespace) -> int:
    _warn_about_file(args)
    identity = load_or_create_identity(args.profile, args.identity_file)
    print(f"node id:    {identity.node_id}")
    print(f"public key: {identity.public_key_b64}")
    print(f"stored in:  {key_store(args.profile, args.identity_file).describe()}")
    return 0


def rotate_key(args: argparse.Namespace) -> int:
    _warn_about_file(args)
    old, new = rotate_identity(args.profile, args.identity_file)
    if old is not None:
        print(f"old node id: {old.node_id} (the tracker will let its registration expire)")
    print(f"node id:     {new.node_id}")
    print(f"public key:  {new.public_key_b64}")
    return 0
