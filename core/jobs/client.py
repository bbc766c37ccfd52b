"""The executor's side of the tracker's job API.

Registration is a signed request (the node key, and on a private tracker the
node's join token); it returns a session
credential that authenticates later calls (``Authorization: MeshNet-Session``),
kept per tracker URL in the credential store so a restart does not need a new
one. When the tracker refuses the credential (expired, tracker restarted with
a new database) the client registers again and retries once.

Errors at this boundary: ``TrackerUnreachable`` (retry with backoff),
``LeaseLost`` (410: stop the attempt, discard its result), ``TrackerRefused``
(the tracker said no, with its reason code). Downloads are verified against the
SHA-256 the tracker names; a mismatch is a ``TrackerRefused``, never a task input.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from core.errors import LeaseLost, TrackerRefused, TrackerUnreachable
from core.identity.keypair import NodeIdentity
from core.identity.signing import signed_headers
from core.jobs.credentials import CredentialStore
from core.network.tls_trust import tracker_verify
from core.network.tracker_client import JOIN_TOKEN_HEADER, _refusal

log = logging.getLogger(__name__)

HEADER_NODE = "X-Meshnet-Node"
HEADER_SHA256 = "X-Meshnet-Sha256"
HEADER_LEASE = "X-Meshnet-Lease"
SESSION_SCHEME = "MeshNet-Session"


@dataclass(frozen=True)
class Lease:
    lease_id: str
    job_id: str
    task_id: str
    attempt_number: int
    deadline: float
    lease_seconds: float
    payload: dict[str, Any]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Lease:
        return cls(
            lease_id=str(data["lease_id"]),
            job_id=str(data["job_id"]),
            task_id=str(data["task_id"]),
            attempt_number=int(data["attempt_number"]),
            deadline=float(data["deadline"]),
            lease_seconds=float(data["lease_seconds"]),
            payload=dict(data["payload"]),
        )


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


class JobsClient:
    def __init__(
        self,
        base_url: str,
        identity: NodeIdentity,
        *,
        credentials: CredentialStore | None = None,
        timeout_s: float = 30.0,
        ca_file: str | Path | None = None,
        join_token: str | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.identity = identity
        # A private tracker admits executors as it admits nodes: with a join token.
        self.join_token = join_token
        self.credentials = credentials
        self._http = httpx.Client(
            base_url=self.base_url, timeout=timeout_s, verify=tracker_verify(ca_file)
        )
        self._session: str | None = credentials.load(self.base_url) if credentials else None

    @property
    def node_id(self) -> str:
        return self.identity.node_id

    @property
    def has_session(self) -> bool:
        """A session credential is at hand (saved by an earlier run, or by ``jobs login``)."""
        return self._session is not None

    def close(self) -> None:
        self._http.close()

    # -- transport ---------------------------------------------------------------

    def _send(
        self,
        method: str,
        path: str,
        *,
        body: bytes = b"",
        headers: Mapping[str, str] | None = None,
        signed: bool = False,
    ) -> httpx.Response:
        all_headers = dict(headers or {})
        if signed or self._session is None:
            all_headers.update(signed_headers(method, path, body, self.identity))
        else:
            all_headers["Authorization"] = f"{SESSION_SCHEME} {self._session}"
            all_headers[HEADER_NODE] = self.identity.node_id
        try:
            return self._http.request(method, path, content=body or None, headers=all_headers)
        except httpx.HTTPError as exc:
            raise TrackerUnreachable(
                f"cannot reach the tracker at {self.base_url}: {exc}; the executor keeps retrying"
            ) from exc

    def _call(
        self,
        method: str,
        path: str,
        *,
        body: bytes = b"",
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """One request; a refused session credential registers again and retries once."""
        response = self._send(method, path, body=body, headers=headers)
        if response.status_code == 401 and self._session is not None:
            log.info("the tracker refused the session credential; registering again")
            self.register()
            response = self._send(method, path, body=body, headers=headers)
        if response.status_code == 410:
            raise LeaseLost(_refusal(response).detail)
        if response.status_code >= 400:
            raise _refusal(response)
        return response

    def _post_json(self, path: str, payload: Mapping[str, Any]) -> httpx.Response:
        body = json.dumps(payload, separators=(",", ":")).encode()
        return self._call("POST", path, body=body, headers={"Content-Type": "application/json"})

    # -- executor ----------------------------------------------------------------

    def register(self) -> str:
        path = "/api/v1/jobs/executors/register"
        body = json.dumps({"public_key": self.identity.public_key_b64}).encode()
        headers = {"Content-Type": "application/json"}
        if self.join_token:
            headers[JOIN_TOKEN_HEADER] = self.join_token
        response = self._send("POST", path, body=body, headers=headers, signed=True)
        if response.status_code >= 400:
            raise _refusal(response)
        token = str(response.json()["session_token"])
        self._session = token
        if self.credentials is not None:
            self.credentials.save(self.base_url, token)
        return token

    def node_heartbeat(self) -> bool:
        """True when the tracker knows this executor; False asks for a re-registration."""
        path = f"/api/v1/jobs/executors/{self.identity.node_id}/heartbeat"
        response = self._send(
            "POST", path, body=b"{}", headers={"Content-Type": "application/json"}
        )
        if response.status_code == 401:
            return False
        if response.status_code >= 400:
            raise _refusal(response)
        return True

    def claim(self) -> Lease | None:
        response = self._post_json("/api/v1/jobs/claim", {})
        if response.status_code == 204:
            return None
        return Lease.from_json(response.json())

    def attempt_heartbeat(self, lease_id: str) -> float:
        response = self._post_json(f"/api/v1/jobs/leases/{lease_id}/heartbeat", {})
        return float(response.json()["deadline"])

    def complete(self, lease_id: str, metrics_sha256: str) -> bool:
        """True when the tracker committed the result; False when it refused it (409/410)."""
        try:
            self._post_json(
                f"/api/v1/jobs/leases/{lease_id}/complete", {"metrics_sha256": metrics_sha256}
            )
        except LeaseLost:
            return False
        except TrackerRefused as exc:
            if exc.status_code == 409:
                return False
            raise
        return True

    def fail(self, lease_id: str, error: str) -> None:
        self._post_json(f"/api/v1/jobs/leases/{lease_id}/fail", {"error": error[:4000]})

    # -- artifacts ---------------------------------------------------------------

    def upload_artifact(self, path: Path, key: str, lease_id: str) -> str:
        data = path.read_bytes()
        sha = hashlib.sha256(data).hexdigest()
        self._call(
            "PUT",
            f"/api/v1/jobs/artifacts/{key}",
            body=data,
            headers={HEADER_SHA256: sha, HEADER_LEASE: lease_id},
        )
        return sha

    def download_artifact(self, key: str, dest: Path, lease_id: str) -> Path:
        """Fetch what `lease_id` may read (its job's inputs, its task's checkpoints)."""
        response = self._call(
            "GET", f"/api/v1/jobs/artifacts/{key}", headers={HEADER_LEASE: lease_id}
        )
        expected = response.headers.get(HEADER_SHA256, "")
        actual = hashlib.sha256(response.content).hexdigest()
        if actual != expected:
            raise TrackerRefused(
                502, "hash-mismatch", f"artifact {key} arrived as {actual}, expected {expected}"
            )
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(dest.name + ".part")
        tmp.write_bytes(response.content)
        os.replace(tmp, dest)
        return dest

    # -- checkpoints -------------------------------------------------------------

    def checkpoint_register_part(self, lease_id: str, step: int, part: Mapping[str, Any]) -> None:
        self._post_json(
            f"/api/v1/jobs/leases/{lease_id}/checkpoints/parts", {"step": step, "part": dict(part)}
        )

    def checkpoint_commit(
        self, lease_id: str, step: int, parts: Sequence[Mapping[str, Any]], manifest_uri: str
    ) -> None:
        self._post_json(
            f"/api/v1/jobs/leases/{lease_id}/checkpoints/commit",
            {"step": step, "parts": [dict(p) for p in parts], "manifest_uri": manifest_uri},
        )

    def checkpoint_latest(self, job_id: str, task_id: str) -> dict[str, Any] | None:
        response = self._call("GET", f"/api/v1/jobs/{job_id}/tasks/{task_id}/checkpoints/latest")
        if response.status_code == 204:
            return None
        return dict(response.json())
