"""The tracker's start-up line names its two "private" settings apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tracker_service.conftest import make_settings
from tracker_service.app import create_app


@pytest.mark.parametrize(("private", "endpoints"), [(False, True), (True, False)])
def test_the_ready_line_says_join_tokens_and_private_endpoints_apart(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, private: bool, endpoints: bool
) -> None:
    settings = make_settings(
        tmp_path, background_tasks=False, private=private, allow_private_endpoints=endpoints
    )
    with caplog.at_level("INFO", logger="tracker_service.app"):
        app = create_app(settings)
    app.state.tracker.database.dispose()
    ready = next(r.getMessage() for r in caplog.records if "tracker ready" in r.getMessage())
    assert f"join-token-required={private}" in ready
    assert f"private-endpoints-allowed={endpoints}" in ready
    assert " private=" not in ready  # the ambiguous word alone is gone
