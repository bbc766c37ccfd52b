"""`meshnet-tracker serve --ollama-port`: Ollama's paths, and only them, on a second port."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.tracker_service.server_process import TrackerProcess, free_port
from tracker_service.cli.commands import main


@pytest.fixture(scope="module")
def tracker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TrackerProcess, int]]:
    home = tmp_path_factory.mktemp("ollama-port")
    ollama_port = free_port()
    process = TrackerProcess(
        home, f"sqlite:///{home / 'tracker.db'}", extra_args=("--ollama-port", str(ollama_port))
    ).start(timeout_s=120)  # a loaded machine starts it slowly
    try:
        yield process, ollama_port
    finally:
        process.stop()


def test_the_second_port_answers_ollamas_paths_and_nothing_else(
    tracker: tuple[TrackerProcess, int],
) -> None:
    process, port = tracker
    second = f"http://127.0.0.1:{port}"
    assert httpx.get(second + "/").text == "Ollama is running"
    assert httpx.get(second + "/api/version").json()["version"]
    assert httpx.get(second + "/api/tags").json() == {"models": []}  # nothing certified yet
    refused = httpx.get(second + "/api/v1/state")
    assert refused.status_code == 404 and "only Ollama" in refused.json()["error"]
    assert httpx.post(second + "/v1/chat/completions", json={}).status_code == 404
    # The tracker's own port answers both.
    assert httpx.get(process.url + "/api/v1/state").status_code == 200
    assert httpx.get(process.url + "/api/version").status_code == 200
    assert f"also on port {port}" in httpx.get(process.url + "/").text  # the status page


def test_ollama_port_with_workers_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'tracker.db'}"
    code = main(["serve", "--db", db, "--port", str(free_port()), "--ollama-port",
                 str(free_port()), "--workers", "2"])  # fmt: skip
    assert code != 0
    assert "ollama-port-workers" in capsys.readouterr().err
