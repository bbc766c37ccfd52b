"""Property-based API testing: schemathesis drives every operation of the
tracker's own OpenAPI document with generated requests (valid and not).

Whatever a stranger sends, the tracker answers without a 5xx, with a status
code the route documents, and with a body that matches the schema documented
for that status. The number of examples per operation is bounded so the suite
stays fast (``MESHNET_API_FUZZ_EXAMPLES`` raises it for a deeper run).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from tests.tracker_service.conftest import make_settings
from tracker_service.app import create_app

EXAMPLES = int(os.environ.get("MESHNET_API_FUZZ_EXAMPLES", "8"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    response_schema_conformance,
    content_type_conformance,
]


# schemathesis parametrizes at collection time, so the app exists at import: a
# tracker over its own temporary SQLite, without background dialling.
_FOLDER = Path(tempfile.mkdtemp(prefix="meshnet-openapi-fuzz-"))
APP = create_app(make_settings(_FOLDER, background_tasks=False))
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@pytest.fixture(scope="module", autouse=True)
def _dispose_app() -> Iterator[None]:
    yield
    APP.state.tracker.database.dispose()
    shutil.rmtree(_FOLDER, ignore_errors=True)


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_every_operation_answers_generated_input_as_documented(case: schemathesis.Case) -> None:
    case.call_and_validate(checks=CHECKS)
