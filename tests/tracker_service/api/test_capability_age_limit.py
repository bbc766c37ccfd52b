"""The tracker tells a registering node how old a capability report it admits."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

from fastapi.testclient import TestClient

from tests.tracker_service.conftest import make_settings, register
from tests.tracker_service.helpers import FakeNode
from tracker_service.app import create_app


def _client(tmp_path: Path, **overrides: object) -> Iterator[TestClient]:
    app = create_app(make_settings(tmp_path, background_tasks=False, **overrides))
    with TestClient(app) as client:
        yield client
    app.state.tracker.database.dispose()


def test_the_registration_answer_carries_the_default_age_limit(tmp_path: Path) -> None:
    for client in _client(tmp_path):
        answer = register(client, FakeNode())
        assert answer.status_code == 200, answer.text
        assert answer.json()["capability_max_age_s"] == 900.0


def test_the_operator_set_limit_is_the_one_sent_and_the_one_enforced(tmp_path: Path) -> None:
    for client in _client(tmp_path, capability_max_age_s=60.0):
        node = FakeNode()
        answer = register(client, node)
        assert answer.json()["capability_max_age_s"] == 60.0
        old = register(client, node, validated_at=time.time() - 61)
        assert old.status_code == 422 and old.json()["reason"] == "stale"
        young = register(client, node, validated_at=time.time() - 29)  # what the node sends
        assert young.status_code == 200
