"""Argument types for the commands: a bad value is one sentence with a reason
code from argparse (exit 2), never a traceback.

argparse turns only ``ArgumentTypeError``/``ValueError`` from a ``type=``
callable into a usage error; the core parsers raise ``ConfigError`` with a
reason, so these wrappers carry the sentence and the code across.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from urllib.parse import urlsplit

from core.doctor.checkup import parse_layers
from core.errors import ConfigError, MeshnetError
from core.network.tls_trust import CA_FILE_ENV, tracker_verify
from core.recipes.catalogue import load_catalogue

MAX_PORT = 65535


def layers(text: str) -> tuple[int, int]:
    """``--layers A:B``."""
    try:
        return parse_layers(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(f"{exc} [{exc.reason}]") from None


def tracker_url(text: str) -> str:
    """``--tracker``: an http(s) URL with a host, checked before anything is dialled."""
    parts = urlsplit(text)
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        parts = parts._replace(netloc="")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a tracker URL; give http://host:port or https://host "
            "[bad-tracker-url]"
        )
    return text.rstrip("/")


def port(text: str) -> int:
    """``--port``: 0 (any free port) to 65535, refused here rather than at bind time."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_PORT:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a port; give 0 (any free port) to {MAX_PORT} [bad-config]"
        )
    return value


def megabytes(text: str) -> int:
    """A memory size in MB (``--kv-budget-mb``, ``--memory-cap-mb``): a whole number ≥ 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a size in MB; give a whole number of at least 1 [bad-config]"
        )
    return value


def recipe(text: str) -> str:
    """``--recipe``: a catalogue id, checked before a model is imported or loaded."""
    try:
        load_catalogue().get(text)
    except MeshnetError as exc:
        raise argparse.ArgumentTypeError(f"{exc} [{exc.reason}]") from None
    return text


def ca_file(text: str) -> Path:
    """``--ca-file``: a readable PEM file of the CA an https:// tracker's certificate
    chains to, checked (by loading it) before anything is dialled."""
    try:
        tracker_verify(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(f"{exc} [{exc.reason}]") from None
    return Path(text)


def add_ca_file_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ca-file",
        type=ca_file,
        default=None,
        metavar="PEM",
        help=f"trust an https:// tracker whose certificate this private CA signed "
        f"(default: ${CA_FILE_ENV}, else the operating system's CA store)",
    )
