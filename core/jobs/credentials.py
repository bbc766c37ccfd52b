"""The executor's session credential, one per tracker URL.

Kept in the OS keyring (service ``meshnet-jobs``, user = the tracker URL without
its trailing slash) where one works; where none does (a headless box), or when
the operator names a file (``--credentials-file`` / ``MESHNET_JOBS_CREDENTIALS``),
in a JSON file rewritten 0600 on every save. A corrupt file never crashes the
executor: it behaves as if nothing were saved, and the executor registers again.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import keyring
import keyring.errors

from core.errors import KeyringFailed
from core.identity.keystore import keyring_problem
from core.identity.private_file import write_private_file
from core.paths import data_home

log = logging.getLogger(__name__)

KEYRING_SERVICE = "meshnet-jobs"
ENV_PATH = "MESHNET_JOBS_CREDENTIALS"


def normalize(tracker_url: str) -> str:
    return tracker_url.rstrip("/")


def default_path() -> Path:
    raw = os.environ.get(ENV_PATH)
    return Path(raw).expanduser() if raw else data_home() / "jobs" / "credentials.json"


class CredentialStore:
    """Where session credentials live: the keyring, or a 0600 JSON file."""

    def __init__(self, path: Path | None = None, *, use_keyring: bool | None = None) -> None:
        explicit_file = path is not None or ENV_PATH in os.environ
        self.path = path or default_path()
        if use_keyring is None:
            use_keyring = not explicit_file and keyring_problem() is None
        self.use_keyring = use_keyring

    def describe(self) -> str:
        return f"OS keyring ({KEYRING_SERVICE})" if self.use_keyring else f"file {self.path}"

    def load(self, tracker_url: str) -> str | None:
        if self.use_keyring:
            try:
                return keyring.get_password(KEYRING_SERVICE, normalize(tracker_url))
            except keyring.errors.KeyringError as exc:
                log.warning("the keyring could not be read (%s); registering afresh", exc)
                return None
        return self._read_all().get(normalize(tracker_url))

    def save(self, tracker_url: str, token: str) -> None:
        if self.use_keyring:
            try:
                keyring.set_password(KEYRING_SERVICE, normalize(tracker_url), token)
                return
            except keyring.errors.KeyringError as exc:
                log.warning("the keyring refused the credential (%s); using %s", exc, self.path)
                self.use_keyring = False
        tokens = self._read_all()
        tokens[normalize(tracker_url)] = token
        self._write_all(tokens)

    def clear(self, tracker_url: str) -> bool:
        """Forget the credential for `tracker_url` (``meshnet-node jobs logout``). A keyring
        that fails for any other reason (locked, no backend, D-Bus gone) is a KeyringFailed
        whose sentence says what to do, never a traceback."""
        if self.use_keyring:
            try:
                keyring.delete_password(KEYRING_SERVICE, normalize(tracker_url))
                return True
            except keyring.errors.PasswordDeleteError:
                return False
            except keyring.errors.KeyringError as exc:
                raise KeyringFailed(
                    f"the OS keyring could not forget the credential for "
                    f"{normalize(tracker_url)} ({type(exc).__name__}: {exc}); unlock the "
                    "keyring and try again, or use --credentials-file"
                ) from exc
        tokens = self._read_all()
        if tokens.pop(normalize(tracker_url), None) is None:
            return False
        self._write_all(tokens)
        return True

    def _read_all(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}

    def _write_all(self, tokens: dict[str, str]) -> None:
        write_private_file(self.path, json.dumps(tokens, indent=2, sort_keys=True).encode())
