"""Every status a tracker route's code can answer with is in its OpenAPI responses.

The schemathesis run (test_openapi_fuzz.py) only sees the statuses its
generated requests happen to reach; a refusal behind a valid signature, a ban
or a lost lease it never reaches. This test reads the code instead
(route_statuses.py) and holds each operation's documented responses to it.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from tests.tracker_service.conftest import make_settings
from tests.tracker_service.route_statuses import Operation, operations, route_statuses
from tracker_service.api.routes import error_responses, refuse
from tracker_service.app import create_app

# Statuses no client reads, so no document lists them: 499 is what the gateway
# logs for a stream whose client already left (routes/openai.py CLIENT_CLOSED).
NOBODY_READS = {
    ("POST", "/v1/chat/completions"): {499},
    ("POST", "/v1/completions"): {499},
    ("POST", "/v1/responses"): {499},
    ("POST", "/v1/messages"): {499},
    ("POST", "/api/chat"): {499},
    ("POST", "/api/generate"): {499},
}


@pytest.fixture(scope="module")
def tracker() -> Iterator[FastAPI]:
    folder = Path(tempfile.mkdtemp(prefix="meshnet-openapi-statuses-"))
    app = create_app(make_settings(folder, background_tasks=False))
    try:
        yield app
    finally:
        app.state.tracker.database.dispose()
        shutil.rmtree(folder, ignore_errors=True)


def _documented(document: dict[str, Any], operation: Operation) -> set[int] | None:
    entry = document["paths"].get(operation.path, {}).get(operation.method.lower())
    if entry is None:
        return None
    return {int(status) for status in entry["responses"] if status.isdigit()}


def _undocumented(app: FastAPI) -> dict[str, list[int]]:
    document = app.openapi()
    missing: dict[str, list[int]] = {}
    for operation in operations(app.routes):
        name = f"{operation.method} {operation.path}"
        documented = _documented(document, operation)
        if documented is None:
            missing[name] = [-1]  # the walk and the document disagree on what exists
            continue
        allowed = NOBODY_READS.get((operation.method, operation.path), set())
        gap = route_statuses(operation) - documented - allowed
        if gap:
            missing[name] = sorted(gap)
    return missing


def test_every_status_a_route_can_answer_is_in_its_openapi_responses(tracker: FastAPI) -> None:
    assert _undocumented(tracker) == {}, (
        "these operations can answer statuses their OpenAPI responses do not list "
        "(add them to the route's responses=, or to openapi_responses.py when every "
        "route gives them; -1: the operation is missing from the document)"
    )


def test_the_walk_covers_every_documented_operation(tracker: FastAPI) -> None:
    document = tracker.openapi()
    walked = {(o.method.lower(), o.path) for o in operations(tracker.routes)}
    listed = {
        (method, path)
        for path, item in document["paths"].items()
        for method in item
        if method in ("get", "put", "post", "delete", "patch")
    }
    assert listed <= walked, f"operations the walk never reads: {sorted(listed - walked)}"


def test_the_walk_finds_refusals_routes_are_known_to_give(tracker: FastAPI) -> None:
    found = {(o.method, o.path): route_statuses(o) for o in operations(tracker.routes)}
    # Signature (401), ban (403), nodes per address (409), identity (422), rate (429).
    assert {401, 403, 409, 422, 429} <= found[("POST", "/api/v1/nodes/register")]
    # An expired node is told to re-register with 410, a replaced one with 409.
    assert {409, 410} <= found[("POST", "/api/v1/nodes/{node_id}/heartbeat")]
    # A lost lease (410) through the queue's reason -> status table.
    assert 410 in found[("POST", "/api/v1/jobs/leases/{lease_id}/heartbeat")]
    # No live route (503), unknown recipe (404), dark recipe (409).
    assert {404, 409, 503} <= found[("POST", "/api/v1/routes")]


def test_an_undocumented_refusal_is_caught() -> None:
    app = FastAPI()

    @app.get("/teapot", responses=error_responses(404))
    async def teapot(brew: bool = False) -> dict[str, str]:
        if brew:
            raise refuse(418, "teapot", "this route refuses with a status it never documents")
        raise refuse(404, "not-found", "nothing here")

    assert _undocumented(app) == {"GET /teapot": [418]}
