"""Write a secret file (a node key, a credential) so that a crash never leaves half of it.

The bytes go to a temporary file beside the target, made readable by its owner
alone before a byte is written (0600 from the start on POSIX; on Windows its
access list is replaced by the owner's single entry, core/identity/windows_acl.py — a
chmod after writing would leave a window), are flushed to disk, and then
replace the target in one rename: a reader sees the old file or the new one,
never an empty or truncated key. The rename keeps the temporary's list.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path

from core.identity.windows_acl import Run, restrict_to_owner, run_icacls

PRIVATE_MODE = 0o600


def write_private_file(
    path: Path, data: bytes, *, platform: str | None = None, run_acl: Run | None = None
) -> None:
    # a folder made here is its owner's alone too (an existing one is left as it is)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # mkstemp creates the file 0600 (PRIVATE_MODE) from the start.
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            if (platform or sys.platform) == "win32":
                restrict_to_owner(temporary, os.environ, run_acl or run_icacls)  # still empty
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _sync_directory(path.parent)


def _sync_directory(folder: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where folders cannot be opened."""
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
