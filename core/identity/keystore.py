"""Where a node's private key lives: the OS keyring, or (by explicit choice) a file.

The OS keyring (service ``meshnet``) holds one entry per node profile, so several
nodes can run on one machine, each with its own id (``--profile NAME``).
A headless Linux box often has no usable keyring backend; rather than silently
writing the key somewhere weaker, the command line refuses and names the
alternative: an identity file chosen with ``--identity-file PATH``, written 0600,
with a warning. The desktop app never hands its user a flag: it asks
:func:`fallback_identity_file` and, where no keyring works, keeps the key in an
owner-only file in its own data folder (``<data home>/keys/<profile>.pem``).

On Windows the keyring is Windows Credential Manager, asked for by name
(``WinVaultKeyring``) rather than left to keyring's discovery, and the file
fallback is owner-only by its access list (core/identity/windows_acl.py), which is
checked again whenever the key is read.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import keyring
import keyring.errors
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from keyring.backend import KeyringBackend
from keyring.backends import chainer, fail, null

from core.errors import AclError, IdentityError
from core.identity.keypair import NodeIdentity, b64decode, b64encode
from core.identity.private_file import write_private_file
from core.identity.windows_acl import Run, others_with_access, run_icacls
from core.paths import data_home

log = logging.getLogger(__name__)

KEYRING_SERVICE = "meshnet"
DEFAULT_PROFILE = "default"
KEYS_FOLDER = "keys"
_PROFILE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def check_profile(profile: str) -> str:
    if not _PROFILE_RE.match(profile):
        raise IdentityError(
            f"profile name {profile!r} is not usable: use 1-64 letters, digits, '.', '_' or '-'",
            reason="bad-profile",
        )
    return profile


def windows_vault() -> KeyringBackend | None:
    """Windows Credential Manager, or None where it cannot work (not Windows, no pywin32-ctypes)."""
    from keyring.backends.Windows import WinVaultKeyring

    try:
        WinVaultKeyring.priority  # noqa: B018 - raises where the vault cannot be used
    except Exception as exc:
        log.debug("WinVaultKeyring unavailable (%s)", exc)
        return None
    return WinVaultKeyring()


def active_backend(platform: str | None = None) -> KeyringBackend:
    """The keyring the node's key goes to: on Windows, Credential Manager by name, unless
    a backend was chosen explicitly (keyring.set_keyring, a keyringrc); else keyring's own."""
    chosen = keyring.get_keyring()
    if (platform or sys.platform) == "win32" and isinstance(chosen, chainer.ChainerBackend):
        return windows_vault() or chosen
    return chosen


def keyring_problem(backend: KeyringBackend | None = None) -> str | None:
    """Why the active keyring backend cannot hold a key, or None when it can."""
    backend = active_backend() if backend is None else backend
    if isinstance(backend, fail.Keyring | null.Keyring):
        return f"no usable OS keyring was found (active backend: {type(backend).__name__})"
    if isinstance(backend, chainer.ChainerBackend) and not backend.backends:
        return "no usable OS keyring was found (the keyring chain has no backends)"
    return None


class KeyStore(Protocol):
    """Somewhere one identity's private key is kept."""

    def load(self) -> NodeIdentity | None: ...

    def save(self, identity: NodeIdentity) -> None: ...

    def describe(self) -> str: ...


@dataclass(frozen=True)
class KeyringStore:
    """One keyring entry: service ``meshnet``, user ``node:<profile>``, value the
    base64 of the raw 32-byte private key."""

    profile: str = DEFAULT_PROFILE

    @property
    def username(self) -> str:
        return f"node:{self.profile}"

    def _require_backend(self) -> None:
        problem = keyring_problem()
        if problem is not None:
            raise IdentityError(
                f"{problem}, so the node's private key has nowhere safe to live. "
                "Install and unlock a keyring (e.g. GNOME Keyring or KWallet), or pass "
                "--identity-file PATH to keep the key in a file readable only by you.",
                reason="no-keyring",
            )

    def load(self) -> NodeIdentity | None:
        self._require_backend()
        try:
            stored = active_backend().get_password(KEYRING_SERVICE, self.username)
        except keyring.errors.KeyringError as exc:
            raise IdentityError(
                f"the OS keyring could not be read ({exc}); unlock it and try again",
                reason="keyring-error",
            ) from exc
        if stored is None:
            return None
        try:
            return NodeIdentity.from_seed(b64decode(stored))
        except (ValueError, IdentityError) as exc:
            raise IdentityError(
                f"the keyring entry {KEYRING_SERVICE}/{self.username} is not a MeshNet key; "
                "run `meshnet-node identity rotate` to replace it",
                reason="bad-private-key",
            ) from exc

    def save(self, identity: NodeIdentity) -> None:
        self._require_backend()
        try:
            active_backend().set_password(KEYRING_SERVICE, self.username, b64encode(identity.seed))
        except keyring.errors.KeyringError as exc:
            raise IdentityError(
                f"the OS keyring refused to store the key ({exc}); unlock it and try again",
                reason="keyring-error",
            ) from exc

    def describe(self) -> str:
        return f"OS keyring ({KEYRING_SERVICE}/{self.username})"


@dataclass(frozen=True)
class FileStore:
    """A PKCS#8 PEM file readable only by its owner — the explicit fallback."""

    path: Path

    def load(self) -> NodeIdentity | None:
        if not self.path.exists():
            return None
        _warn_if_readable_by_others(self.path)
        try:
            key = serialization.load_pem_private_key(self.path.read_bytes(), password=None)
        except (OSError, ValueError, TypeError) as exc:
            raise IdentityError(
                f"{self.path} is not a readable Ed25519 key file ({exc})",
                reason="bad-private-key",
            ) from exc
        if not isinstance(key, Ed25519PrivateKey):
            raise IdentityError(
                f"{self.path} holds a {type(key).__name__}, not an Ed25519 key",
                reason="bad-private-key",
            )
        return NodeIdentity(key)

    def save(self, identity: NodeIdentity) -> None:
        pem = identity.private_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        # Atomic and 0600 from the start: a crash mid-rotation keeps the old key whole.
        write_private_file(self.path, pem)
        log.warning(
            "node private key stored in a plain file; anyone who can read it can act as this node",
            extra={"path": str(self.path)},
        )

    def describe(self) -> str:
        return f"identity file {self.path}"


def _warn_if_readable_by_others(
    path: Path,
    *,
    platform: str | None = None,
    environ: Mapping[str, str] | None = None,
    run: Run = run_icacls,
) -> None:
    """Refuse a key file others can read: whoever read it can already act as this node."""
    if (platform or sys.platform) == "win32":
        _refuse_if_listed_for_others(path, os.environ if environ is None else environ, run)
        return
    mode = path.stat().st_mode & 0o777
    if os.name == "posix" and mode & 0o077:
        raise IdentityError(
            f"the identity file {path} is readable by other users (mode {mode:o}); run "
            f"`chmod 600 {path}` (and rotate the key if others may have read it)",
            reason="key-file-exposed",
        )


def _refuse_if_listed_for_others(path: Path, environ: Mapping[str, str], run: Run) -> None:
    try:
        others = others_with_access(path, environ, run)
    except AclError as exc:  # cannot tell: say so, and use the key
        log.warning("could not read the access list of %s (%s)", path, exc)
        return
    if others:
        raise IdentityError(
            f"the identity file {path} can be read by {', '.join(others)}; run "
            f'`icacls "{path}" /inheritance:r /grant:r "%USERNAME%:F"` '
            "(and rotate the key if others may have read it)",
            reason="key-file-exposed",
        )


def default_identity_file(profile: str = DEFAULT_PROFILE) -> Path:
    """The key file the app keeps ``profile``'s key in where no keyring works (its folder
    is made owner-only when the key is first written, core.identity.private_file)."""
    return data_home() / KEYS_FOLDER / f"{check_profile(profile)}.pem"


def fallback_identity_file(profile: str = DEFAULT_PROFILE) -> Path | None:
    """The key file the app uses for ``profile``, or None where the OS keyring holds it.

    A file once made stays the key's home (a keyring installed later must not give
    the computer a new node id); otherwise the file is used only where no keyring works.
    """
    path = default_identity_file(profile)
    if path.exists() or keyring_problem() is not None:
        return path
    return None


def key_store(profile: str = DEFAULT_PROFILE, identity_file: Path | None = None) -> KeyStore:
    """The store a profile uses: the identity file when one is given, else the file the
    app made for it where no keyring worked (the same node everywhere), else the keyring."""
    check_profile(profile)
    if identity_file is not None:
        return FileStore(Path(identity_file))
    app_file = default_identity_file(profile)
    if app_file.exists():
        return FileStore(app_file)
    return KeyringStore(profile)


def load_or_create_identity(
    profile: str = DEFAULT_PROFILE, identity_file: Path | None = None
) -> NodeIdentity:
    """This profile's identity, made and stored on first run."""
    store = key_store(profile, identity_file)
    identity = store.load()
    if identity is None:
        identity = NodeIdentity.generate()
        store.save(identity)
        log.info(
            "created node identity",
            extra={"node_id": identity.node_id, "store": store.describe()},
        )
    return identity


def rotate_identity(
    profile: str = DEFAULT_PROFILE, identity_file: Path | None = None
) -> tuple[NodeIdentity | None, NodeIdentity]:
    """Replace this profile's key pair; returns (old or None, new).

    The node id changes with the key: the tracker sees a new node, and the old
    id's registrations simply expire.
    """
    store = key_store(profile, identity_file)
    old = store.load()
    new = NodeIdentity.generate()
    store.save(new)
    log.info(
        "rotated node identity",
        extra={"old_node_id": old.node_id if old else None, "node_id": new.node_id},
    )
    return old, new
