"""One machine under many DNS names is one operator.

A sybil operator rents one VPS and points ``a.evil.example`` and ``b.evil.example``
at it. Judged by the endpoint's host name, its two identities were "independent"
(two network prefixes ``host:a…`` and ``host:b…``): each could audit or check the
other, and traffic a node sent itself from its own address never counted as own
traffic. The tracker judges by the address the endpoint resolved to when the node
registered: the two names are one prefix, no judge of each other, own traffic, and
one host for the per-address cap.

The real tracker app; the product's resolver answers for the made-up names.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.tracker_service.conftest import make_settings, register
from tests.tracker_service.helpers import FakeNode
from tests.tracker_service.services.test_node_fetch_policy import resolve_with
from tracker_service import errors
from tracker_service.app import create_app
from tracker_service.domain.credit_rules import same_address
from tracker_service.store.credits import cap_hosts
from tracker_service.store.independence import independent, standings

ONE_VPS = "198.51.100.7"
ELSEWHERE = "203.0.113.9"


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    resolve_with(
        monkeypatch,
        {"a.evil.example": [ONE_VPS], "b.evil.example": [ONE_VPS], "honest.example": [ELSEWHERE]},
    )
    app = create_app(make_settings(tmp_path, background_tasks=False, max_nodes_per_address=2))
    yield app
    app.state.tracker.database.dispose()


def test_two_names_of_one_machine_are_not_independent(app: Any) -> None:
    sybil_a = FakeNode(endpoint="ws://a.evil.example:9001")
    sybil_b = FakeNode(endpoint="ws://b.evil.example:9002")
    honest = FakeNode(endpoint="ws://honest.example:9003")
    with TestClient(app) as client:
        for node in (sybil_a, sybil_b, honest):
            assert register(client, node).status_code == 200
        # The per-address cap counts both names as one host: a third name is refused.
        third = FakeNode(endpoint="ws://a.evil.example:9004")
        refused = register(client, third)
        assert refused.status_code == 409 and errors.TOO_MANY_NODES in refused.text
    with app.state.tracker.database.session() as session:
        found = standings(session, [sybil_a.node_id, sybil_b.node_id, honest.node_id])
        hosts = cap_hosts(session, [sybil_a.node_id, honest.node_id])
    a, b, c = found[sybil_a.node_id], found[sybil_b.node_id], found[honest.node_id]
    assert not independent(a, b)  # never each other's auditor, arbiter or job checker
    assert independent(a, c) and independent(b, c)
    # Credits sent from the VPS's address to a node on it are own traffic.
    assert same_address(ONE_VPS, hosts[sybil_a.node_id])
    assert not same_address(ONE_VPS, hosts[honest.node_id])
