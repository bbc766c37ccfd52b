"""The manifest every model folder carries: which files, their SHA-256, one content digest.

The content digest commits to every file's hash, so two folders with the same
digest hold the same bytes; the recipe fingerprint builds on it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import ModelError

MANIFEST_NAME = "meshnet-manifest.json"
MANIFEST_SCHEMA_VERSION = 1
_CHUNK = 1 << 20


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


@dataclass(frozen=True)
class FileEntry:
    sha256: str
    size: int


@dataclass(frozen=True)
class ModelManifest:
    model_id: str
    revision: str
    architecture: str
    layer_count: int
    files: Mapping[str, FileEntry]
    source: Mapping[str, Any] = field(default_factory=dict)

    @property
    def content_digest(self) -> str:
        body = {name: {"sha256": e.sha256, "size": e.size} for name, e in self.files.items()}
        return hashlib.sha256(canonical_json(body)).hexdigest()

    @property
    def held_layers(self) -> tuple[int, int]:
        """The layers whose weights the folder holds: all, unless a pull fetched some only."""
        held = self.source.get("layers")
        if isinstance(held, list | tuple) and len(held) == 2:
            return int(held[0]), int(held[1])
        return 0, self.layer_count

    @property
    def total_bytes(self) -> int:
        return sum(entry.size for entry in self.files.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": MANIFEST_SCHEMA_VERSION,
            "model_id": self.model_id,
            "revision": self.revision,
            "architecture": self.architecture,
            "layer_count": self.layer_count,
            "files": {
                n: {"sha256": e.sha256, "size": e.size} for n, e in sorted(self.files.items())
            },
            "content_digest": self.content_digest,
            "source": dict(self.source),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ModelManifest:
        try:
            files = {
                str(name): FileEntry(sha256=str(e["sha256"]), size=int(e["size"]))
                for name, e in data["files"].items()
            }
            manifest = cls(
                model_id=str(data["model_id"]),
                revision=str(data["revision"]),
                architecture=str(data["architecture"]),
                layer_count=int(data["layer_count"]),
                files=files,
                source=dict(data.get("source") or {}),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ModelError(f"model manifest is malformed ({exc}); re-import the model") from exc
        recorded = data.get("content_digest")
        if recorded is not None and recorded != manifest.content_digest:
            raise ModelError("model manifest's content digest does not match its file list")
        return manifest

    @classmethod
    def load(cls, folder: Path) -> ModelManifest:
        path = Path(folder) / MANIFEST_NAME
        if not path.is_file():
            raise ModelError(
                f"{folder} has no {MANIFEST_NAME}: it is not a complete MeshNet model folder; "
                "import or download the model again",
                reason="model-incomplete",
            )
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ModelError(f"cannot read {path}: {exc}") from exc
        return cls.from_dict(data)

    @classmethod
    def build(
        cls,
        folder: Path,
        *,
        model_id: str,
        revision: str,
        architecture: str,
        layer_count: int,
        source: Mapping[str, Any] | None = None,
        digests: Mapping[str, str] | None = None,
    ) -> ModelManifest:
        """Hash every file in ``folder`` (except the manifest itself); ``digests`` are
        SHA-256s the caller has just computed, by relative name, not computed again (a
        GGUF of tens of gigabytes is read once, not twice)."""
        folder = Path(folder)
        known = dict(digests or {})
        files: dict[str, FileEntry] = {}
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.name != MANIFEST_NAME and not path.name.startswith("."):
                name = path.relative_to(folder).as_posix()
                sha = known.get(name) or sha256_file(path)
                files[name] = FileEntry(sha, path.stat().st_size)
        return cls(model_id, revision, architecture, layer_count, files, dict(source or {}))

    def write(self, folder: Path) -> Path:
        path = Path(folder) / MANIFEST_NAME
        path.write_text(
            json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
        return path

    def verify(self, folder: Path) -> list[str]:
        """Files whose bytes differ from the manifest (empty when the folder is intact)."""
        problems: list[str] = []
        for name, entry in self.files.items():
            path = Path(folder) / name
            if not path.is_file():
                problems.append(f"{name} is missing")
            elif path.stat().st_size != entry.size or sha256_file(path) != entry.sha256:
                problems.append(f"{name} does not match its recorded SHA-256")
        return problems
