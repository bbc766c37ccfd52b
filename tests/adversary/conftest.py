"""What the attack tests share: a tiny Llama built once per module, the nodes and node
processes a test starts (stopped after it), and a live tracker with a priority gate and two real
in-process nodes of a tiny chat model for the credit attacks that go through the gateway
(tests/tracker_service/gateway_cluster.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

# The real tracker app behind a TestClient, as the tracker's own tests use it.
from tests.tracker_service.conftest import client as client

# The tiny Llama built once per module, and the real in-process nodes a test starts.
from tests.tracker_service.conftest import nodes as nodes
from tests.tracker_service.conftest import settings as settings
from tests.tracker_service.conftest import tiny_model as tiny_model
from tests.tracker_service.gateway_cluster import (
    GatewayCluster,
    build_chat_model,
    certified_cluster,
)
from tests.tracker_service.node_process import NodeProcess


@pytest.fixture(scope="module")
def credit_cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GatewayCluster]:
    """A module's own cluster; a module's ``CLUSTER_SETTINGS`` dict adds settings."""
    model = build_chat_model(tmp_path_factory.mktemp("credit-tiny-chat"))
    # A cap on generations turns the priority gate on: credit then buys a place in line.
    settings: dict[str, Any] = {"gateway_max_concurrent": 4}
    settings.update(getattr(request.module, "CLUSTER_SETTINGS", {}))
    with certified_cluster(tmp_path_factory.mktemp("credit-tracker"), model, **settings) as cluster:
        yield cluster


@pytest.fixture
def processes() -> Iterator[list[NodeProcess]]:
    """Node processes a test starts: append them, and they stop after it."""
    started: list[NodeProcess] = []
    yield started
    for node in started:
        node.stop()
