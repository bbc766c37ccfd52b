"""Property-based API testing: schemathesis drives every operation of the
tracker's own OpenAPI document with generated requests (valid and not).

Every check schemathesis has runs (the Python API's ``--checks all``), in its
examples, coverage and fuzzing phases: whatever a stranger sends, the tracker
answers without a 5xx, with a documented status and body, with ``Allow`` on a
405 for an undeclared method, accepting what the schema admits and refusing
what it does not. It runs twice: on a fresh tracker, and on one whose
failed-authentication throttle is engaged for the client's address, where the
429s must be in the documented shapes too (OpenAI's under ``/v1``). The number
of examples per operation is bounded so the suite stays fast
(``MESHNET_API_FUZZ_EXAMPLES`` raises it for a deeper run).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis.checks import CHECKS, load_all_checks

from tests.tracker_service.conftest import make_settings
from tracker_service.api.auth_throttle import CREDENTIALS, NODE, FailedAuthThrottle
from tracker_service.app import create_app

EXAMPLES = int(os.environ.get("MESHNET_API_FUZZ_EXAMPLES", "8"))
load_all_checks()
ALL_CHECKS = CHECKS.get_all()
THROTTLE_LIMIT = 3
# The address schemathesis' ASGI client (Starlette's TestClient) sends from.
CLIENT_HOST = "testclient"


def _throttle_of(app: FastAPI) -> FailedAuthThrottle:
    """The app's throttle instance (the middleware stack is built on first use)."""
    with TestClient(app) as client:
        client.get("/api/v1/state")
    layer: Any = app.middleware_stack
    while layer is not None and not isinstance(layer, FailedAuthThrottle):
        layer = getattr(layer, "app", None)
    assert isinstance(layer, FailedAuthThrottle)
    return layer


def _engage_throttle(app: FastAPI) -> None:
    """Fill both windows of the client's address, on a clock that stands still so the
    window cannot free during the run; then check the throttle really answers."""
    throttle = _throttle_of(app)
    throttle._clock = lambda: 1_000.0
    for door in (CREDENTIALS, NODE):
        for _ in range(THROTTLE_LIMIT):
            throttle._count((CLIENT_HOST, door))
    with TestClient(app) as client:
        assert client.get("/v1/models").status_code == 429


# schemathesis parametrizes at collection time, so the apps exist at import: each a
# tracker over its own temporary SQLite, without background dialling.
_FOLDER = Path(tempfile.mkdtemp(prefix="meshnet-openapi-fuzz-"))
APP = create_app(make_settings(_FOLDER / "fresh", background_tasks=False))
THROTTLED_APP = create_app(
    make_settings(
        _FOLDER / "throttled",
        background_tasks=False,
        failed_auth_per_minute_per_address=THROTTLE_LIMIT,
    )
)
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)
throttled_schema = schemathesis.openapi.from_asgi("/openapi.json", THROTTLED_APP)
# The throttle answers before any header is read, so a request missing a required
# header gets its 429 too (documented on every operation): that refusal is expected.
_missing_header = throttled_schema.config.checks.missing_required_header
_missing_header.expected_statuses = [*_missing_header.expected_statuses, "429"]
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)


@pytest.fixture(scope="module", autouse=True)
def _dispose_apps() -> Iterator[None]:
    _engage_throttle(THROTTLED_APP)
    yield
    for app in (APP, THROTTLED_APP):
        app.state.tracker.database.dispose()
    shutil.rmtree(_FOLDER, ignore_errors=True)


@schema.parametrize()
@FUZZ_SETTINGS
def test_every_operation_answers_generated_input_as_documented(case: schemathesis.Case) -> None:
    case.call_and_validate(checks=ALL_CHECKS)


@throttled_schema.parametrize()
# Every answer there is the throttle's 429, so fewer fuzzed examples say as much.
@settings(FUZZ_SETTINGS, max_examples=max(1, EXAMPLES // 4))
def test_with_the_auth_throttle_engaged_every_answer_is_documented(
    case: schemathesis.Case,
) -> None:
    case.call_and_validate(checks=ALL_CHECKS)
