"""A keyring in one JSON file (MESHNET_TEST_KEYRING_FILE), shared by the test and the node
children it starts, so the app and its node are one identity (as with an OS keyring)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from jaraco.classes import properties
from keyring.backend import KeyringBackend


class FileKeyring(KeyringBackend):
    @properties.classproperty
    def priority(cls) -> float:
        # Viable only while a test names its file: once imported, keyring's chainer
        # would otherwise pick it up in later tests that have no file.
        if "MESHNET_TEST_KEYRING_FILE" not in os.environ:
            raise RuntimeError("no MESHNET_TEST_KEYRING_FILE")
        return 1

    @staticmethod
    def _path() -> Path:
        return Path(os.environ["MESHNET_TEST_KEYRING_FILE"])

    def _read(self) -> dict[str, str]:
        path = self._path()
        return json.loads(path.read_text()) if path.exists() else {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._read().get(f"{service}\0{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        entries = self._read()
        entries[f"{service}\0{username}"] = password
        self._path().write_text(json.dumps(entries))

    def delete_password(self, service: str, username: str) -> None:
        entries = self._read()
        entries.pop(f"{service}\0{username}", None)
        self._path().write_text(json.dumps(entries))
