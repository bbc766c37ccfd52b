"""Gateway refusals that need no node: bodies, unknown models and unknown URLs under /v1.

A tracker with no nodes answers on loopback (no keys configured); each refusal
must be OpenAI's error shape with a sentence, as the official client reads it.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.tracker_service.conftest import make_settings
from tracker_service.app import create_app
from tracker_service.gateway.openai_schemas import ChatCompletionCreate, CompletionCreate


@pytest.fixture
def loopback(tmp_path: Any) -> Iterator[TestClient]:
    app = create_app(make_settings(tmp_path, background_tasks=False))
    with TestClient(app, client=("127.0.0.1", 50000)) as client:
        yield client
    app.state.tracker.database.dispose()


def openai_error(reply: Any, status: int) -> dict[str, Any]:
    assert reply.status_code == status, reply.text
    error = reply.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert len(error["message"].split()) >= 5  # a sentence, not "Not Found"
    return dict(error)


@pytest.mark.parametrize("role", ["user", "system", "developer"])
def test_a_message_without_content_is_refused_unless_it_is_the_assistants(role: str) -> None:
    with pytest.raises(ValueError, match=f"a {role} message needs its content"):
        ChatCompletionCreate.model_validate({"model": "m", "messages": [{"role": role}]})
    # An assistant turn may omit it (OpenAI's turns that carried tool calls do).
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant"}]}
    assert ChatCompletionCreate.model_validate(body).messages[1].text() == ""


def test_a_user_message_without_content_is_a_400_naming_messages(loopback: TestClient) -> None:
    reply = loopback.post(
        "/v1/chat/completions", json={"model": "m", "messages": [{"role": "user"}]}
    )
    error = openai_error(reply, 400)
    assert error["param"] == "messages" and "needs its content" in error["message"]


def test_retrieving_a_model_that_does_not_serve_is_a_404_model_not_found(
    loopback: TestClient,
) -> None:
    error = openai_error(loopback.get("/v1/models/no-such-model"), 404)
    assert error["code"] == "model_not_found" and error["param"] == "model"
    assert "no-such-model" in error["message"] and "GET /v1/models" in error["message"]


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("POST", "/v1/embeddings", 404),
        ("GET", "/v1/nothing/here", 404),
        ("DELETE", "/v1/models", 405),
    ],
)
def test_unknown_urls_under_v1_answer_in_openais_shape(
    loopback: TestClient, method: str, path: str, status: int
) -> None:
    error = openai_error(loopback.request(method, path), status)
    assert error["code"] == "unknown_url" and path in error["message"]


def test_unknown_urls_elsewhere_answer_a_sentence_with_a_reason(loopback: TestClient) -> None:
    reply = loopback.get("/api/v1/" + "x" * 5000)
    assert reply.status_code == 404
    body = reply.json()
    assert body["reason"] == "http-404" and "/openapi.json" in body["detail"]
    assert len(body["detail"]) < 400  # a junk path is cut, not echoed whole
    reply = loopback.put("/api/v1/state")
    assert reply.status_code == 405 and "does not take PUT" in reply.json()["detail"]


def test_an_image_part_is_one_sentence_naming_its_type(loopback: TestClient) -> None:
    image = {"type": "image_url", "image_url": {"url": "http://example.invalid/a.png"}}
    content = [{"type": "text", "text": "what is this?"}, image]
    body = {"model": "m", "messages": [{"role": "user", "content": content}]}
    error = openai_error(loopback.post("/v1/chat/completions", json=body), 400)
    assert error["param"] == "messages"
    assert "content parts of type image_url are not supported" in error["message"]
    assert "valid string" not in error["message"]  # not the union's per-branch complaints
    assert "Value error" not in error["message"]  # pydantic's prefix is not for people


def test_an_explicit_null_means_the_default_as_openai_reads_it() -> None:
    nulls = {"temperature": None, "top_p": None, "n": None, "stream": None, "seed": None}
    body = ChatCompletionCreate.model_validate(
        {"model": "m", "messages": [{"role": "user", "content": "hi"}], **nulls}
    )
    assert (body.temperature, body.top_p, body.n, body.stream, body.seed) == (
        1.0,
        1.0,
        1,
        False,
        None,
    )
    completion = CompletionCreate.model_validate(
        {"model": "m", "prompt": "hi", "temperature": None}
    )
    assert completion.temperature == 1.0 and completion.unsupported() == []


def test_stream_options_without_stream_is_a_400_naming_it(loopback: TestClient) -> None:
    for path, extra in (
        ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}),
        ("/v1/completions", {"prompt": "hi"}),
    ):
        body = {"model": "m", "stream_options": {"include_usage": True}, **extra}
        error = openai_error(loopback.post(path, json=body), 400)
        assert error["param"] == "stream_options" and "stream" in error["message"]


def test_a_body_over_the_limit_under_v1_is_a_413_in_openais_shape(tmp_path: Any) -> None:
    app = create_app(make_settings(tmp_path, background_tasks=False, max_body_bytes=2048))
    with TestClient(app, client=("127.0.0.1", 50000)) as client:
        big = {"model": "m", "prompt": "x" * 4000}
        gateway = client.post("/v1/completions", json=big)
        tracker = client.post("/api/v1/routes", json=big)
    app.state.tracker.database.dispose()
    error = openai_error(gateway, 413)
    assert error["code"] == "body_too_large" and "2048" in error["message"]
    assert tracker.status_code == 413 and tracker.json()["reason"] == "body-too-large"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (CompletionCreate(model="m", prompt="hi"), 16),
        (CompletionCreate(model="m", prompt="hi", max_tokens=40), 40),
        (ChatCompletionCreate(model="m", messages=[{"role": "user", "content": "hi"}]), 512),
    ],
)
def test_completions_default_to_16_tokens_and_chat_keeps_its_default(
    tmp_path: Any, body: CompletionCreate | ChatCompletionCreate, expected: int
) -> None:
    app = create_app(make_settings(tmp_path, background_tasks=False))
    gateway = app.state.gateway
    assets = SimpleNamespace(context_length=2048)
    assert gateway.settings.gateway_default_max_tokens == 512
    assert gateway._max_tokens(body, 3, assets) == expected
    app.state.tracker.database.dispose()
