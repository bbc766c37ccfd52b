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


def test_a_fresh_start_logs_one_schema_line_not_alembics_chatter(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("INFO"):
        app = create_app(make_settings(tmp_path, background_tasks=False))
    app.state.tracker.database.dispose()
    assert [r for r in caplog.records if r.name.startswith("alembic")] == []
    schema = [r.getMessage() for r in caplog.records if "database schema at head" in r.getMessage()]
    assert len(schema) == 1 and "migrated empty -> " in schema[0]


def test_at_debug_alembic_still_says_each_revision(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("DEBUG"):
        app = create_app(make_settings(tmp_path, background_tasks=False))
    app.state.tracker.database.dispose()
    assert any("Running upgrade" in r.getMessage() for r in caplog.records)


def test_a_failing_migration_still_raises_and_alembic_is_loud_again_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import logging

    from tracker_service.store import db

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("migration 0042 failed")

    monkeypatch.setattr(db.command, "upgrade", broken)
    with pytest.raises(RuntimeError, match="0042"):
        db.migrate(db.make_engine(f"sqlite:///{tmp_path / 't.db'}"))
    assert logging.getLogger("alembic").level == logging.NOTSET
