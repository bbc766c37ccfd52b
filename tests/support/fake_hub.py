"""A stand-in for the Hugging Face Hub on loopback: as much of its API as huggingface_hub's
``HfApi.model_info`` and ``hf_hub_download`` use, serving repositories from folders.

    GET  /api/models/{repo}[/revision/{rev}]   id, sha, siblings (name, size)
    HEAD /{repo}/resolve/{rev}/{file}           ETag, X-Repo-Commit, Content-Length
    GET  /{repo}/resolve/{rev}/{file}           the bytes (``Range: bytes=N-`` honoured)

A revision is a branch (``main``) or a commit. Errors carry ``X-Error-Code`` as
the Hub's do (RepoNotFound, RevisionNotFound, EntryNotFound), which
huggingface_hub turns into its typed errors. Safetensors files get a SHA-256
ETag (the Hub's LFS files do), others a git blob id. Every request is recorded
as (method, path), so a test can assert what was asked and what was not.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

_RESOLVE = re.compile(r"^/(?P<repo>.+?)/resolve/(?P<rev>[^/]+)/(?P<file>.+)$")
_API = "/api/models/"


@dataclass
class FakeRepo:
    commits: dict[str, Path] = field(default_factory=dict)  # commit -> folder
    refs: dict[str, str] = field(default_factory=dict)  # branch -> commit

    def commit_of(self, revision: str) -> str | None:
        if revision in self.commits:
            return revision
        return self.refs.get(revision)


class FakeHub:
    """``with FakeHub() as hub: hub.add_commit("org/name", folder)``; ``hub.url`` is the Hub."""

    def __init__(self) -> None:
        self.repos: dict[str, FakeRepo] = {}
        self.requests: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def add_commit(self, repo_id: str, folder: Path, *, branch: str = "main") -> str:
        """Serve ``folder`` as a new commit of ``repo_id``, now the head of ``branch``."""
        repo = self.repos.setdefault(repo_id, FakeRepo())
        commit = hashlib.sha1(f"{repo_id}#{len(repo.commits)}".encode()).hexdigest()
        repo.commits[commit] = Path(folder)
        repo.refs[branch] = commit
        return commit

    def downloads(self) -> list[str]:
        """The files fetched with GET (not HEAD), as ``{rev}/{file}``."""
        return [
            f"{m['rev']}/{m['file']}"
            for method, path in self.requests
            if method == "GET" and (m := _RESOLVE.match(path))
        ]

    def __enter__(self) -> FakeHub:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def record(self, method: str, path: str) -> None:
        with self._lock:
            self.requests.append((method, path))


def _etag(path: Path, data: bytes) -> str:
    if path.suffix == ".safetensors":
        return hashlib.sha256(data).hexdigest()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _handler_for(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return None

        def do_GET(self) -> None:
            self._answer("GET")

        def do_HEAD(self) -> None:
            self._answer("HEAD")

        def _answer(self, method: str) -> None:
            path = unquote(urlsplit(self.path).path)
            hub.record(method, path)
            if path.startswith(_API):
                self._model_info(path[len(_API) :])
            elif match := _RESOLVE.match(path):
                self._resolve(method, match["repo"], match["rev"], match["file"])
            else:
                self._refuse(404, "RepoNotFound", "no such route")

        def _model_info(self, rest: str) -> None:
            repo_id, _, revision = rest.partition("/revision/")
            repo = hub.repos.get(repo_id)
            if repo is None:
                return self._refuse(404, "RepoNotFound", "Repository not found")
            commit = repo.commit_of(revision or "main")
            if commit is None:
                return self._refuse(404, "RevisionNotFound", "Invalid rev id")
            folder = repo.commits[commit]
            siblings = [
                {"rfilename": p.name, "size": p.stat().st_size}
                for p in sorted(folder.iterdir())
                if p.is_file()
            ]
            body = json.dumps({"id": repo_id, "sha": commit, "siblings": siblings}).encode()
            self._send(200, {"Content-Type": "application/json"}, body, "GET")

        def _resolve(self, method: str, repo_id: str, revision: str, filename: str) -> None:
            repo = hub.repos.get(repo_id)
            if repo is None:
                return self._refuse(404, "RepoNotFound", "Repository not found")
            commit = repo.commit_of(revision)
            if commit is None:
                return self._refuse(404, "RevisionNotFound", "Invalid rev id")
            path = repo.commits[commit] / filename
            if not path.is_file():
                return self._refuse(404, "EntryNotFound", "Entry not found", commit)
            data = path.read_bytes()
            headers = {
                "ETag": f'"{_etag(path, data)}"',
                "X-Repo-Commit": commit,
                "Accept-Ranges": "bytes",
            }
            ranged = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or "")
            if ranged and method == "GET":
                first = int(ranged.group(1))
                headers["Content-Range"] = f"bytes {first}-{len(data) - 1}/{len(data)}"
                return self._send(206, headers, data[first:], method)
            self._send(200, headers, data, method)

        def _refuse(self, status: int, code: str, message: str, commit: str = "") -> None:
            headers = {"X-Error-Code": code, "X-Error-Message": message}
            if commit:
                headers["X-Repo-Commit"] = commit
            body = json.dumps({"error": message}).encode()
            self._send(status, headers, body, self.command)

        def _send(self, status: int, headers: dict[str, str], body: bytes, method: str) -> None:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if method != "HEAD":
                self.wfile.write(body)

    return Handler
