"""A dict-backed keyring backend: the real ``keyring`` API, storage in memory.

Installed with ``keyring.set_keyring`` so the code under test goes through the
same ``keyring.get_password`` / ``set_password`` calls it makes in production.
"""

from __future__ import annotations

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class DictKeyring(KeyringBackend):
    priority = 1  # a plain number is what keyring reads

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        try:
            del self.entries[(service, username)]
        except KeyError:
            raise PasswordDeleteError(f"no entry for {service}/{username}") from None
