"""Content-addressed artifacts: blobs on local disk under their SHA-256, keys in the store.

A key (``jobs/<job>/<task>/out.txt``, ``inputs/<sha>/data.tar``) names bytes; the
bytes live once at ``<root>/sha256/<aa>/<sha256>`` however many keys name them.
Every upload is hashed while it is written and refused unless it matches the
SHA-256 the uploader declared; a key, once written, only ever names the same
bytes again (re-uploading identical bytes is a no-op, different bytes a 409).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

from sqlalchemy.orm import Session

from tracker_service.errors import ArtifactRefusal
from tracker_service.store.job_tables import KEY_LEN, Artifact

_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# The same rule for the whole key, as the OpenAPI document states it (check_key decides).
KEY_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*$"
_HEX64 = re.compile(r"^[0-9a-f]{64}$")

BAD_KEY = "bad-artifact-key"
HASH_MISMATCH = "hash-mismatch"
KEY_TAKEN = "artifact-key-taken"
TOO_LARGE = "artifact-too-large"
NO_ARTIFACT = "no-such-artifact"


def check_key(key: str) -> str:
    """A key is 1+ plain segments joined by '/': no '..', no absolute path, no odd bytes."""
    segments = key.split("/")
    if (
        not key
        or len(key) > KEY_LEN
        or any(not _SEGMENT.match(s) or s in (".", "..") for s in segments)
    ):
        raise ArtifactRefusal(
            BAD_KEY,
            f"artifact key {key[:80]!r} is not usable: use '/'-separated plain names "
            "(letters, digits, '.', '_', '-'; no '..'), at most 512 characters",
        )
    return key


def check_sha256(value: str) -> str:
    if not _HEX64.match(value or ""):
        raise ArtifactRefusal(HASH_MISMATCH, "declare the upload's SHA-256 as 64 lowercase hex")
    return value


class BlobStore:
    def __init__(self, root: Path, max_bytes: int) -> None:
        self.root = root
        self.max_bytes = max_bytes

    def path_of(self, sha256: str) -> Path:
        return self.root / "sha256" / sha256[:2] / sha256

    def put(self, data: bytes, declared_sha256: str) -> tuple[str, int]:
        """Verify and store `data`; returns (sha256, size). Atomic: no partial blob."""
        check_sha256(declared_sha256)
        if len(data) > self.max_bytes:
            raise ArtifactRefusal(
                TOO_LARGE,
                f"the artifact is {len(data)} bytes; this tracker keeps at most {self.max_bytes}",
                status_code=413,
            )
        actual = hashlib.sha256(data).hexdigest()
        if actual != declared_sha256:
            raise ArtifactRefusal(
                HASH_MISMATCH,
                f"the bytes hash to {actual}, not the declared {declared_sha256}; "
                "the upload was corrupted or the wrong file was sent",
            )
        target = self.path_of(actual)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".upload-")
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                os.replace(tmp, target)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        return actual, len(data)


def record_artifact(
    session: Session, key: str, sha256: str, size: int, *, uploaded_by: str, now: float
) -> Artifact:
    existing = session.get(Artifact, key)
    if existing is not None:
        if existing.sha256 != sha256:
            raise ArtifactRefusal(
                KEY_TAKEN,
                f"{key} already names other bytes ({existing.sha256}); artifacts are immutable",
                status_code=409,
            )
        return existing
    row = Artifact(key=key, sha256=sha256, size_bytes=size, uploaded_by=uploaded_by, created_at=now)
    session.add(row)
    session.flush()
    return row


def find_artifact(session: Session, key: str) -> Artifact:
    row = session.get(Artifact, key)
    if row is None:
        raise ArtifactRefusal(NO_ARTIFACT, f"no artifact {key!r} on this tracker", 404)
    return row
