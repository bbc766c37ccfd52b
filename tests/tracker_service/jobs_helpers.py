"""A fake executor and a submitter against the tracker's job API (tests only)."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
from fastapi.testclient import TestClient

from tests.tracker_service.helpers import FakeNode
from tracker_service.store.db import Database
from tracker_service.store.submitters import add_submitter_token


def issue_submitter_token(database: Database, label: str = "tests") -> str:
    with database.sessions.begin() as session:
        _, token = add_submitter_token(session, label=label, now=time.time())
    return token


@dataclass
class Submitter:
    client: TestClient | httpx.Client
    token: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def upload_input(self, name: str, data: bytes) -> str:
        sha = hashlib.sha256(data).hexdigest()
        key = f"inputs/{sha}/{name}"
        r = self.client.put(
            f"/api/v1/jobs/artifacts/{key}",
            content=data,
            headers={**self.auth, "X-Meshnet-Sha256": sha},
        )
        assert r.status_code == 200, r.text
        return key

    def submit(self, **body: Any) -> Any:
        body.setdefault("workload", "selftest")
        return self.client.post("/api/v1/jobs", json=body, headers=self.auth)

    def show(self, job_id: str) -> dict[str, Any]:
        r = self.client.get(f"/api/v1/jobs/{job_id}", headers=self.auth)
        assert r.status_code == 200, r.text
        result: dict[str, Any] = r.json()
        return result


@dataclass
class FakeExecutor:
    client: TestClient | httpx.Client
    node: FakeNode = field(default_factory=FakeNode)
    session_token: str = ""

    def signed_post(self, path: str, payload: Any) -> Any:
        body = json.dumps(payload).encode()
        return self.client.post(path, content=body, headers=self.node.headers("POST", path, body))

    def register(self) -> Any:
        r = self.signed_post(
            "/api/v1/jobs/executors/register", {"public_key": self.node.public_b64}
        )
        if r.status_code == 200:
            self.session_token = r.json()["session_token"]
        return r

    @property
    def session(self) -> dict[str, str]:
        return {
            "Authorization": f"MeshNet-Session {self.session_token}",
            "X-Meshnet-Node": self.node.node_id,
        }

    def post(self, path: str, payload: Any = None) -> Any:
        return self.client.post(path, json=payload or {}, headers=self.session)

    def claim(self) -> Any:
        return self.post("/api/v1/jobs/claim")

    def upload(self, lease_id: str, key: str, data: bytes, sha: str | None = None) -> Any:
        return self.client.put(
            f"/api/v1/jobs/artifacts/{key}",
            content=data,
            headers={
                **self.session,
                "X-Meshnet-Sha256": sha or hashlib.sha256(data).hexdigest(),
                "X-Meshnet-Lease": lease_id,
            },
        )

    def finish(self, lease: dict[str, Any], metrics: bytes = b'{"ok": true}') -> Any:
        key = lease["payload"]["output_prefix"] + "metrics.json"
        r = self.upload(lease["lease_id"], key, metrics)
        assert r.status_code == 200, r.text
        return self.post(
            f"/api/v1/jobs/leases/{lease['lease_id']}/complete",
            {"metrics_sha256": hashlib.sha256(metrics).hexdigest()},
        )


# The queue's mechanics are tested with checked work off (every result pays at once);
# tests/adversary/test_jobs_checks.py tests the checks themselves.
UNCHECKED_JOBS_ENV = {
    "MESHNET_TRACKER_JOBS_CHECK_SHARE": "0",
    "MESHNET_TRACKER_JOBS_PROBATION_TASKS": "0",
}


def without_job_checks(monkeypatch: Any) -> None:
    """Turn checked work off for this test's tracker (in process or a child process)."""
    for name, value in UNCHECKED_JOBS_ENV.items():
        monkeypatch.setenv(name, value)
