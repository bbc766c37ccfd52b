"""Everything that talks to the Hugging Face Hub, through huggingface_hub.

A moving revision (a branch or tag) is resolved once to its commit, and every
file is then downloaded at that commit, so a pull never mixes two versions of
a repository. huggingface_hub's and its HTTP client's errors are mapped here,
where they enter, to a ModelError with a reason and a sentence saying what to
do; nothing above this module sees them.

    reason               when
    repo-not-found       no such repository, or private or gated for this login
    revision-not-found   the repository has no such branch, tag or commit
    hub-offline          HF_HUB_OFFLINE is set
    hub-unreachable      no connection to the Hub (or to HF_ENDPOINT)
    download-failed      any other refusal or failure while downloading
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from core.errors import ConfigError, MeshnetError, ModelError
from core.models.hub import ByteCallback, Downloader

_COMMIT = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class HubRevision:
    """A repository at one commit, and the sizes of the files it holds there."""

    repo_id: str
    commit: str
    sizes: Mapping[str, int] = field(default_factory=dict)
    files: frozenset[str] | None = None  # None: the Hub did not list them


def resolve_revision(repo_id: str, revision: str, *, endpoint: str | None = None) -> HubRevision:
    """The commit ``revision`` (branch, tag or commit) names, with the file list there."""
    from huggingface_hub import HfApi

    try:
        info = HfApi(endpoint=endpoint).model_info(repo_id, revision=revision, files_metadata=True)
    except Exception as exc:
        mapped = hub_error(exc, repo_id, revision, endpoint)
        if mapped is exc:
            raise
        raise mapped from exc
    commit = str(info.sha or "")
    if not _COMMIT.match(commit):
        raise ModelError(
            f"the Hub did not say which commit {repo_id}@{revision} is; pass --revision with "
            "the 40-character commit hash",
            reason="revision-not-found",
        )
    if info.siblings is None:
        return HubRevision(repo_id, commit)
    sizes = {s.rfilename: int(s.size) for s in info.siblings if s.size is not None}
    return HubRevision(repo_id, commit, sizes, frozenset(s.rfilename for s in info.siblings))


def hub_downloader(
    repo_id: str,
    revision: str,
    *,
    endpoint: str | None = None,
    files: Collection[str] | None = None,
) -> Downloader:
    """A downloader over huggingface_hub, pinned to one commit.

    ``files`` (the repository's file list, when known) answers "absent" for
    other names without asking the Hub.
    """
    if not _COMMIT.match(revision):
        raise ConfigError(
            f"revision {revision!r} is not an exact commit: pin the 40-character commit hash "
            "so every node serves the same bytes"
        )

    def download(filename: str, local_dir: Path, on_bytes: ByteCallback | None = None) -> Path:
        from huggingface_hub import hf_hub_download

        if files is not None and filename not in files:
            raise FileNotFoundError(filename)
        bar = ByteBar.for_callback(on_bytes or _ignore)  # never huggingface_hub's own bars
        try:
            return Path(
                hf_hub_download(
                    repo_id,
                    filename,
                    revision=revision,
                    local_dir=str(local_dir),
                    endpoint=endpoint,
                    tqdm_class=cast(Any, bar),
                )
            )
        except Exception as exc:
            if _is_absent(exc):
                raise FileNotFoundError(filename) from exc
            mapped = hub_error(exc, repo_id, revision, endpoint, filename)
            if mapped is exc:
                raise
            raise mapped from exc

    return download


def hub_error(
    exc: BaseException,
    repo_id: str,
    revision: str,
    endpoint: str | None,
    filename: str = "",
) -> BaseException:
    """The MeshnetError to raise for ``exc``; anything not the Hub's is returned as it is."""
    from huggingface_hub import constants, errors

    if isinstance(exc, MeshnetError):
        return exc  # a cancel from the progress callback
    where = endpoint or constants.ENDPOINT
    what = f"{filename} of {repo_id}" if filename else repo_id
    if isinstance(exc, errors.RevisionNotFoundError):
        return ModelError(
            f"{repo_id} has no revision {revision!r}: give a branch, tag or commit hash that "
            f"its history on {where} shows",
            reason="revision-not-found",
        )
    if isinstance(exc, errors.RepositoryNotFoundError):  # gated and private repos too
        return ModelError(
            f"{repo_id} is not a model repository on {where}: check the name (ORG/NAME, as in "
            "its address); if it is private or gated, log in with `hf auth login` first",
            reason="repo-not-found",
        )
    if isinstance(exc, errors.HFValidationError):
        return ConfigError(
            f"{repo_id!r} is not a Hub repository id: give ORG/NAME, as in the model's address",
            reason="bad-repo-id",
        )
    if isinstance(exc, errors.OfflineModeIsEnabled):
        return ModelError(
            "HF_HUB_OFFLINE is set, so nothing can be downloaded: unset it and pull again",
            reason="hub-offline",
        )
    if isinstance(exc, (errors.LocalEntryNotFoundError, *_transport_errors())):
        return ModelError(
            f"could not reach {where} to download {what}: check the internet connection "
            "(or HF_ENDPOINT) and pull again; files already downloaded are kept",
            reason="hub-unreachable",
        )
    if isinstance(exc, errors.HfHubHTTPError | OSError):
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return ModelError(
            f"could not download {what} at {revision[:12]}: {first_line}. Pull again; "
            "files already downloaded are kept",
            reason="download-failed",
        )
    return exc


def _ignore(_count: int) -> None:
    """Bytes nobody is counting."""


def _is_absent(exc: BaseException) -> bool:
    """The Hub answered that the file does not exist (not: the Hub could not be asked)."""
    from huggingface_hub import errors

    return isinstance(exc, errors.EntryNotFoundError) and not isinstance(
        exc, errors.LocalEntryNotFoundError
    )


def _transport_errors() -> tuple[type[BaseException], ...]:
    """The HTTP client's "no connection" errors (huggingface_hub 1.x uses httpx2, older httpx)."""
    found: list[type[BaseException]] = [ConnectionError, TimeoutError]
    for module in ("httpx2", "httpx"):
        try:
            found.append(__import__(module).TransportError)
        except (ImportError, AttributeError):
            continue
    return tuple(found)


class ByteBar:
    """Stands in for huggingface_hub's tqdm bar: hands the bytes written to a callback.

    huggingface_hub builds its bar from the class it is given, for plain HTTP and
    for Xet downloads alike; :meth:`for_callback` makes a class bound to one
    callback. Xet reports network bytes apart (``update_transfer``); only the
    bytes written to the file are counted, so a download counts its size once.
    """

    on_bytes: ByteCallback

    def __init__(self, *_args: Any, initial: int = 0, **_kwargs: Any) -> None:
        if initial:
            self.on_bytes(initial)  # resumed: these bytes were on disk already

    @classmethod
    def for_callback(cls, on_bytes: ByteCallback) -> type[ByteBar]:
        return type("BoundByteBar", (cls,), {"on_bytes": staticmethod(on_bytes)})

    def update(self, n: float | None = 1) -> None:
        if n:
            self.on_bytes(int(n))

    def update_transfer(self, _n: float | None = 1) -> None:
        return None

    def set_postfix_str(self, *_args: Any, **_kwargs: Any) -> None:
        return None

    def set_transfer_postfix_str(self, *_args: Any, **_kwargs: Any) -> None:
        return None

    def refresh(self) -> None:
        return None

    def close(self) -> None:
        return None

    def __enter__(self) -> ByteBar:
        return self

    def __exit__(self, *_exc: object) -> None:
        return None
