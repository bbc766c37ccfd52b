"""Owner-only files on Windows: the ACL that a POSIX mode 0600 is elsewhere.

On Windows a file's mode bits say nothing about who may read it; its access
control list does. A new file inherits its folder's list, and under
``%LOCALAPPDATA%`` that already leaves out other users, but a key written to a
folder the user chose (``--identity-file D:\\keys\\node.pem``) may inherit
"Users: read". So the file's own list is replaced, before a byte of the secret
is written, by one entry: the current user, full control, nothing inherited.
``icacls`` (in every Windows since Vista) does it; its command line is built
here and run by an injected runner, so the command is tested on any OS.
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Callable, Mapping
from pathlib import PurePath

from core.errors import AclError

log = logging.getLogger(__name__)

Run = Callable[[list[str]], str]

# Principals that can read any file on the machine whatever its list says (the
# OS itself, and administrators by taking ownership): their entries expose nothing.
ALWAYS_ABLE = ("nt authority\\system", "builtin\\administrators")


def run_icacls(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AclError(f"{argv[0]} could not run ({exc})") from exc
    if done.returncode != 0:
        raise AclError(f"{' '.join(argv)} failed: {(done.stderr or done.stdout).strip()}")
    return done.stdout


def current_user(environ: Mapping[str, str]) -> str:
    """``DOMAIN\\user`` of the signed-in user (``USERDOMAIN`` is the PC's name off a domain)."""
    user = environ.get("USERNAME", "")
    if not user:
        raise AclError("USERNAME is not set, so the key file's owner cannot be named")
    domain = environ.get("USERDOMAIN", "")
    return f"{domain}\\{user}" if domain else user


def owner_only_command(path: PurePath | str, user: str) -> list[str]:
    """Drop inherited entries and every other entry; the user alone gets full control."""
    return ["icacls", str(path), "/inheritance:r", "/grant:r", f"{user}:(F)", "/q"]


def restrict_to_owner(
    path: PurePath | str, environ: Mapping[str, str], run: Run = run_icacls
) -> None:
    run(owner_only_command(path, current_user(environ)))


def parse_icacls(output: str, path: PurePath | str) -> list[tuple[str, str]]:
    """(principal, rights) for each entry ``icacls PATH`` lists.

    The first line starts with the path; each entry is ``PRINCIPAL:(rights)...``;
    the last line is a summary ("Successfully processed 1 files...")."""
    entries: list[tuple[str, str]] = []
    prefix = str(path)
    for raw in output.splitlines():
        line = raw.strip()
        if line.startswith(prefix):
            line = line[len(prefix) :].strip()
        principal, sep, rights = line.rpartition(":(")
        if not sep or not principal:
            continue
        entries.append((principal.strip(), "(" + rights))
    return entries


def others_with_access(
    path: PurePath | str, environ: Mapping[str, str], run: Run = run_icacls
) -> list[str]:
    """Principals other than the user (and the OS and administrators) listed on ``path``."""
    user = current_user(environ).lower()
    bare_user = user.rpartition("\\")[2]
    found = []
    for principal, _rights in parse_icacls(run(["icacls", str(path)]), path):
        name = principal.lower()
        if name in (user, bare_user) or name in ALWAYS_ABLE:
            continue
        found.append(principal)
    return found
