"""Every answer under /v1 is in OpenAI's error shape, also those the tracker's own
middleware and handlers give there; every /api/v1 answer is in the tracker's.
An undeclared method is 405 with every method the resource declares in Allow."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from tests.tracker_service.conftest import make_settings
from tracker_service.app import create_app


def _openai_error(body: dict[str, object]) -> dict[str, object]:
    error = body["error"]
    assert isinstance(error, dict)
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["type"], str) and "code" in error
    assert "reason" not in body
    return error


def test_the_auth_throttle_answers_v1_in_openais_shape_and_api_in_the_trackers(
    tmp_path: Path,
) -> None:
    settings = make_settings(tmp_path, background_tasks=False, failed_auth_per_minute_per_address=2)
    app = create_app(settings)
    with TestClient(app) as client:
        failures = [client.get("/api/v1/jobs") for _ in range(2)]
        models = client.get("/v1/models")
        chat = client.post("/v1/chat/completions", json={"model": "m", "messages": []})
        jobs = client.get("/api/v1/jobs")
    app.state.tracker.database.dispose()
    assert [f.status_code for f in failures] == [401, 401]
    for answer in (models, chat):
        assert answer.status_code == 429
        error = _openai_error(answer.json())
        assert (error["type"], error["code"]) == ("rate_limit_error", "auth_throttled")
        assert int(answer.headers["retry-after"]) >= 1
    assert jobs.status_code == 429 and jobs.json()["reason"] == "auth-throttled"


def test_v1_routing_refusals_are_in_openais_shape_with_allow(tmp_path: Path) -> None:
    app = create_app(make_settings(tmp_path, background_tasks=False))
    with TestClient(app) as client:
        unknown = client.get("/v1/no-such-thing")
        wrong_method = client.delete("/v1/models")
        api_wrong_method = client.delete("/api/v1/jobs")
    app.state.tracker.database.dispose()
    assert unknown.status_code == 404 and _openai_error(unknown.json())["code"] == "unknown_url"
    assert wrong_method.status_code == 405 and wrong_method.headers["allow"] == "GET, HEAD"
    _openai_error(wrong_method.json())
    assert api_wrong_method.status_code == 405
    assert api_wrong_method.headers["allow"] == "GET, HEAD, POST"
    assert api_wrong_method.json()["reason"] == "http-405"


def test_allow_names_the_literal_path_not_a_parameter_route_it_shadows(tmp_path: Path) -> None:
    app = create_app(make_settings(tmp_path, background_tasks=False))
    with TestClient(app) as client:
        claim = client.get("/api/v1/jobs/claim")  # GET /api/v1/jobs/{job_id} also matches
        options = client.options("/api/v1/jobs/claim")
        artifact = client.options("/api/v1/jobs/artifacts/inputs/x.bin")
    app.state.tracker.database.dispose()
    assert claim.status_code != 405  # a GET is routed to the job lookup, as before
    assert options.status_code == 405 and options.headers["allow"] == "POST"
    assert artifact.headers["allow"] == "GET, HEAD, PUT"
