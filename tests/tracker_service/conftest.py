from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.tracker_service.helpers import FakeNode, heartbeat_body
from tests.tracker_service.real_nodes import RealNode, build_tiny_model
from tracker_service.app import create_app
from tracker_service.config import Settings


def make_settings(tmp_path: Path, **overrides: Any) -> Settings:
    # The test nodes listen on loopback: a public tracker would refuse their endpoints.
    values: dict[str, Any] = {
        "data_dir": tmp_path / "tracker",
        "admin_token": "s3cret-admin",
        "allow_private_endpoints": True,
        # The fake and real test nodes serve plaintext ws:// unless a test says otherwise
        # (tests/tracker_service/services/test_node_tls.py runs the pinned default).
        "allow_plaintext_nodes": True,
        # A test network is one operator's: its first certified source of a model serves
        # (tests/adversary/test_model_source.py runs the public default).
        "trust_first_model_source": True,
        # ... and it runs every node: a range one node holds serves (the unaudited-range
        # tests, tests/adversary/test_lone_range.py, run the public default).
        "trust_lone_ranges": True,
        # Tests register many nodes from one address; the limits have their own tests.
        "registrations_per_minute_per_address": 100_000,
        "route_requests_per_minute_per_address": 100_000,
        "failed_auth_per_minute_per_address": 100_000,
        "max_nodes_per_address": 100_000,
    }
    values.update(overrides)
    return Settings(**values)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # The registry tests need no background dialling of their fake endpoints.
    return make_settings(tmp_path, background_tasks=False)


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    app = create_app(settings)
    with TestClient(app) as test_client:
        yield test_client
    app.state.tracker.database.dispose()


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny 4-layer Llama the real nodes serve, built once per module."""
    return build_tiny_model(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture
def nodes(tiny_model: Path) -> Iterator[list[RealNode]]:
    """Real nodes a test starts: append them, and they stop after it."""
    started: list[RealNode] = []
    yield started
    for node in started:
        node.stop()


def register(
    client: TestClient | httpx.Client,
    node: FakeNode,
    identity: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    **capability: Any,
) -> Any:  # httpx's Response, or the one TestClient's transport returns
    body = node.register_body(identity, **capability)
    path = "/api/v1/nodes/register"
    signed = node.headers("POST", path, body)
    signed.update(headers or {})
    return client.post(path, content=body, headers=signed)


def beat(client: TestClient | httpx.Client, node: FakeNode, **kw: Any) -> Any:
    body = heartbeat_body(**kw)
    path = f"/api/v1/nodes/{node.node_id}/heartbeat"
    return client.post(path, content=body, headers=node.headers("POST", path, body))
