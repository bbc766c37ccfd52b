"""``serve`` options that describe the network to people: name, operator, terms...

Each is also a setting (``MESHNET_TRACKER_NETWORK_NAME`` and so on, config.py), so a
config file of environment variables works as well as the flags.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from tracker_service.domain.invite_links import tracker_url_problem

NETWORK_SETTINGS = (
    "public_url",
    "network_name",
    "network_description",
    "network_operator",
    "network_contact",
    "network_terms_url",
)


def _text(limit: int) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if len(text) > limit or any(not ch.isprintable() for ch in text):
            raise argparse.ArgumentTypeError(
                f"give at most {limit} printable characters (no newlines), got {len(text)}"
            )
        return text.strip()

    return parse


def _url(text: str) -> str:
    problem = tracker_url_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{problem}; give https://host[:port]")
    return text.rstrip("/")


def _terms(text: str) -> str:
    if not text.startswith(("https://", "http://")) or len(text) > 500:
        raise argparse.ArgumentTypeError(
            f"{text[:80]!r} is not a web address; give the https:// address of your terms"
        )
    return text


def add_network_options(serve: argparse.ArgumentParser) -> None:
    group = serve.add_argument_group("what people see before they join (GET /api/v1/network)")
    group.add_argument(
        "--public-url",
        type=_url,
        help="the URL people reach this tracker at, which invites carry (behind a proxy)",
    )
    group.add_argument("--network-name", type=_text(120), help="the network's name")
    group.add_argument(
        "--network-description", type=_text(2000), help="one or two sentences: what it is for"
    )
    group.add_argument("--network-operator", type=_text(200), help="who runs it")
    group.add_argument("--network-contact", type=_text(300), help="how to reach the operator")
    group.add_argument(
        "--network-terms-url", type=_terms, help="the address of the network's terms of use"
    )
