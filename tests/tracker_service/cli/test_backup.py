"""``meshnet-tracker backup`` / ``restore``: a restored tracker shows the same
recipes (with their certification state) and nodes."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.tracker_service.conftest import make_settings, register
from tests.tracker_service.helpers import FakeNode
from tests.tracker_service.server_process import TrackerProcess
from tracker_service.app import create_app
from tracker_service.cli.commands import main


def _state(db_url: str, tmp_path: Path) -> dict[str, object]:
    app = create_app(make_settings(tmp_path, background_tasks=False, db=db_url))
    with TestClient(app) as client:
        state = client.get("/api/v1/state").json()
    app.state.tracker.database.dispose()
    return {"nodes": sorted(n["node_id"] for n in state["nodes"]), "recipes": state["recipes"]}


def test_a_restored_tracker_shows_the_same_recipes_and_nodes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    live = f"sqlite:///{tmp_path / 'live.db'}"
    app = create_app(make_settings(tmp_path, background_tasks=False, db=live))
    with TestClient(app) as client:  # the backup runs while this tracker serves
        for port in (9001, 9002):
            assert register(client, FakeNode(endpoint=f"ws://127.0.0.1:{port}")).status_code == 200
        backup = tmp_path / "backups" / "tracker.db"
        assert main(["backup", str(backup), "--db", live]) == 0
    app.state.tracker.database.dispose()
    before = _state(live, tmp_path)
    assert len(before["nodes"]) == 2  # type: ignore[arg-type]

    restored = f"sqlite:///{tmp_path / 'restored' / 'tracker.db'}"
    assert main(["restore", str(backup), "--db", restored]) == 0
    assert _state(restored, tmp_path) == before
    assert "restored" in capsys.readouterr().out


def test_restore_refuses_a_file_that_is_not_a_tracker_backup(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all" * 100)
    target = f"sqlite:///{tmp_path / 'tracker.db'}"
    assert main(["restore", str(junk), "--db", target]) == 2
    assert "[bad-backup]" in capsys.readouterr().err
    assert not (tmp_path / "tracker.db").exists()


def test_backup_of_postgres_points_to_pg_dump(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["backup", "/tmp/x.db", "--db", "postgresql+psycopg://u@127.0.0.1:9/x"]) == 2
    assert "pg_dump" in capsys.readouterr().err


def test_restore_refuses_while_a_tracker_serves_on_that_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    live = tmp_path / "live.db"
    backup = tmp_path / "backup.db"
    tracker = TrackerProcess(tmp_path, f"sqlite:///{live}").start()
    try:
        assert main(["backup", str(backup), "--db", f"sqlite:///{live}"]) == 0
        capsys.readouterr()
        refused = main(["restore", str(backup), "--db", f"sqlite:///{live}"])
        err = capsys.readouterr().err
    finally:
        tracker.stop()
    assert refused == 2
    assert "[tracker-running]" in err and "stop it" in err
    # The tracker stopped, its lock went with it: the restore now runs.
    assert main(["restore", str(backup), "--db", f"sqlite:///{live}"]) == 0
