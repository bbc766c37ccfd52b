"""Join tokens for private trackers, kept in the OS keyring per tracker URL."""

from __future__ import annotations

import keyring
import keyring.errors

from core.errors import IdentityError
from core.identity.keystore import keyring_problem

JOIN_TOKEN_SERVICE = "meshnet-join-token"


def _username(tracker_url: str) -> str:
    return tracker_url.rstrip("/")


def save_join_token(tracker_url: str, token: str) -> None:
    problem = keyring_problem()
    if problem is not None:
        raise IdentityError(problem, reason="no-keyring")
    try:
        keyring.set_password(JOIN_TOKEN_SERVICE, _username(tracker_url), token)
    except keyring.errors.KeyringError as exc:
        raise IdentityError(f"could not store the join token in the keyring: {exc}") from exc


def load_join_token(tracker_url: str) -> str | None:
    if keyring_problem() is not None:
        return None
    try:
        return keyring.get_password(JOIN_TOKEN_SERVICE, _username(tracker_url))
    except keyring.errors.KeyringError:
        return None
