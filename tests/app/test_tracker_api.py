"""check_tracker and fetch_recipes against a real tracker, and every failure as a sentence."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from app.errors import TrackerReadError
from app.tracker_api import RecipeRow, check_tracker, fetch_allocation, fetch_recipes
from tests.tracker_service.server_process import TrackerProcess, free_port
from tracker_service.api.schemas.state import RecipePublic, StatePublic

URL = "http://tracker.test:8765"


def recipe(**overrides: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "status": "certified",
        "detail": "certified by a distributed forward across 2 nodes",
        "artifact_id": "HuggingFaceTB/SmolLM2-135M-Instruct",
        "recipe_id": "smollm2-135m-fp32",
        "recipe_version": "1",
        "catalogue_version": "2026.11",
        "layer_count": 30,
        "model_artifact_digest": "a" * 64,
        "runtime_recipe_digest": "b" * 64,
        "first_seen_at": 1_700_000_000.0,
        "certified_at": 1_700_000_100.0,
        "certified_route_session": "rs-1",
        "certified_node_count": 2,
        "last_certification_failure": None,
    }
    values.update(overrides)
    return RecipePublic(**values).model_dump(mode="json")


def state(recipes: list[dict[str, Any]] | None = None, live: int = 3) -> dict[str, Any]:
    """A state document built with the tracker's own schema, so the shapes cannot drift."""
    document = StatePublic(
        generated_at=time.time(),
        models=[],
        recipes=[RecipePublic(**r) for r in (recipes or [])],
        nodes=[],
        nodes_total_live=live,
    )
    return document.model_dump(mode="json")


def answering(handler: Callable[[httpx.Request], httpx.Response]) -> httpx.MockTransport:
    return httpx.MockTransport(handler)


def json_reply(body: Any, status: int = 200) -> httpx.MockTransport:
    return answering(lambda request: httpx.Response(status, json=body))


# --- the happy path, without a process ---------------------------------------------


def test_a_meshnet_state_passes_the_check_and_names_what_it_found() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, json=state([recipe()], live=1))

    check = check_tracker(URL + "/", transport=answering(handler))
    assert check.ok
    assert check.sentence == "Connected to a MeshNet tracker: 1 live node, 1 recipe."
    assert seen == [URL + "/api/v1/state"]


def test_recipes_come_back_as_rows_dark_and_certified() -> None:
    dark = recipe(
        status="dark",
        detail="no distributed forward has certified this recipe yet",
        recipe_id="smollm2-fp16",
        certified_at=None,
        certified_route_session=None,
        certified_node_count=None,
        last_certification_failure="route rs-9 lost a node mid-forward",
    )
    rows = fetch_recipes(URL, transport=json_reply(state([recipe(), dark])))
    assert rows == [
        RecipeRow(
            status="certified",
            detail="certified by a distributed forward across 2 nodes",
            artifact_id="HuggingFaceTB/SmolLM2-135M-Instruct",
            recipe_id="smollm2-135m-fp32",
            recipe_version="1",
            layer_count=30,
            model_artifact_digest="a" * 64,
            runtime_recipe_digest="b" * 64,
            certified_at=1_700_000_100.0,
            certified_node_count=2,
            last_certification_failure=None,
        ),
        RecipeRow(
            status="dark",
            detail="no distributed forward has certified this recipe yet",
            artifact_id="HuggingFaceTB/SmolLM2-135M-Instruct",
            recipe_id="smollm2-fp16",
            recipe_version="1",
            layer_count=30,
            model_artifact_digest="a" * 64,
            runtime_recipe_digest="b" * 64,
            certified_at=None,
            certified_node_count=None,
            last_certification_failure="route rs-9 lost a node mid-forward",
        ),
    ]


def test_a_redirect_to_the_tracker_is_followed() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.scheme == "http":
            return httpx.Response(308, headers={"Location": "https://tracker.test/api/v1/state"})
        return httpx.Response(200, json=state([recipe()]))

    assert check_tracker("http://tracker.test", transport=answering(handler)).ok


def test_an_empty_tracker_has_no_recipes() -> None:
    assert fetch_recipes(URL, transport=json_reply(state([], live=0))) == []
    check = check_tracker(URL, transport=json_reply(state([], live=0)))
    assert check.sentence == "Connected to a MeshNet tracker: 0 live nodes, 0 recipes."


# --- failures, each a sentence with a reason -----------------------------------------


def failure(call: Callable[[], Any]) -> TrackerReadError:
    with pytest.raises(TrackerReadError) as caught:
        call()
    return caught.value


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("", "Enter the tracker's address"),
        ("tracker.example.org", "must start with http:// or https://"),
        ("http://", "needs a host name"),
    ],
)
def test_a_bad_url_is_refused_before_any_request(url: str, words: str) -> None:
    def never(request: httpx.Request) -> httpx.Response:
        raise AssertionError("no request for a bad URL")

    for call in (check_tracker, fetch_recipes):
        error = failure(lambda call=call: call(url, transport=answering(never)))  # type: ignore[misc]
        assert error.reason == "bad-url" and words in str(error)


def test_connection_refused_on_a_real_closed_port() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    error = failure(lambda: check_tracker(url, timeout_s=5.0))
    assert error.reason == "connection-refused" and error.sentence == str(error)
    assert str(error) == (
        f"Nothing answers at {url}: check the address and port, and that the tracker is running."
    )


def test_a_real_server_that_never_answers_times_out() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)  # accepts connections in the kernel, never replies
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        error = failure(lambda: check_tracker(url, timeout_s=0.3))
    assert error.reason == "timeout"
    assert "did not answer within 0.3 s" in str(error)


def test_a_connect_timeout_is_a_timeout_too() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectTimeout("timed out", request=request)

    assert failure(lambda: fetch_recipes(URL, transport=answering(slow))).reason == "timeout"


def test_an_unknown_host_is_unreachable() -> None:
    def no_dns(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno -2] Name or service not known", request=request)

    error = failure(lambda: check_tracker(URL, transport=answering(no_dns)))
    assert error.reason == "unreachable" and "check the address" in str(error)


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (httpx.Response(200, text="<html>router login</html>"), "its answer is not JSON"),
        (httpx.Response(404, json={"detail": "Not Found"}), "it has no MeshNet state page"),
        (httpx.Response(200, json=["a", "list"]), "its answer is not a MeshNet state"),
        (httpx.Response(200, json={"status": "ok"}), "its state has no generated_at time"),
        (httpx.Response(200, json={**state(), "recipes": None}), "its state has no recipes list"),
        (
            httpx.Response(200, json={**state(), "nodes_total_live": "3"}),
            "its state has no live node count",
        ),
    ],
)
def test_something_else_on_the_port_is_not_a_meshnet_tracker(
    reply: httpx.Response, why: str
) -> None:
    error = failure(lambda: check_tracker(URL, transport=answering(lambda request: reply)))
    assert error.reason == "not-meshnet"
    assert str(error) == f"{URL} is not a MeshNet tracker ({why}): check the address and port."


def test_a_recipe_in_another_shape_is_not_read_as_a_row() -> None:
    broken = state([recipe()])
    del broken["recipes"][0]["layer_count"]
    error = failure(lambda: fetch_recipes(URL, transport=json_reply(broken)))
    assert error.reason == "not-meshnet" and "recipe list" in str(error)
    broken = state([recipe()])
    broken["recipes"][0]["certified_node_count"] = "two"
    assert failure(lambda: fetch_recipes(URL, transport=json_reply(broken))).reason == "not-meshnet"


@pytest.mark.parametrize("status", [401, 403, 500, 503])
def test_an_http_error_names_the_status(status: int) -> None:
    error = failure(lambda: fetch_recipes(URL, transport=json_reply({"detail": "x"}, status)))
    assert error.reason == "http-error"
    assert f"answered with HTTP {status}" in str(error) and "check the address" in str(error)


# --- a real tracker on loopback -------------------------------------------------------


@pytest.mark.slow
def test_a_real_tracker_passes_the_check_and_lists_one_certified_and_one_dark_recipe(
    seeded_tracker: TrackerProcess,
) -> None:
    tracker = seeded_tracker
    check = check_tracker(tracker.url)
    assert check.ok and check.sentence == "Connected to a MeshNet tracker: 2 live nodes, 2 recipes."
    rows = {row.recipe_id: row for row in fetch_recipes(tracker.url)}
    assert set(rows) == {"smollm2-135m-fp32", "smollm2-fp16"}
    certified, dark = rows["smollm2-135m-fp32"], rows["smollm2-fp16"]
    assert certified.status == "certified" and certified.certified_node_count == 2
    assert certified.certified_at is not None and certified.layer_count == 30
    assert dark.status == "dark" and dark.certified_at is None
    assert len(certified.model_artifact_digest) == 64 and certified.runtime_recipe_digest


@pytest.mark.slow
def test_a_real_tracker_under_a_wrong_path_is_not_a_tracker(
    seeded_tracker: TrackerProcess,
) -> None:
    tracker = seeded_tracker
    url = tracker.url + "/nothing-here"
    error = failure(lambda: check_tracker(url))
    assert error.reason == "not-meshnet"
    assert str(error) == (
        f"{url} is not a MeshNet tracker (it has no MeshNet state page): "
        "check the address and port."
    )


# --- the tracker's layer suggestion ---------------------------------------------------


def test_a_real_tracker_suggests_the_layers_its_nodes_leave_uncovered(
    seeded_tracker: TrackerProcess,
) -> None:
    tracker = seeded_tracker  # its fp32 node serves layers 0-15 of 30
    allocation = fetch_allocation(
        tracker.url,
        model="HuggingFaceTB/SmolLM2-135M-Instruct",
        layer_count=30,
        max_layers=15,
        recipe="smollm2-135m-fp32",
    )
    assert allocation.fits and (allocation.start, allocation.end) == (15, 30)
    assert allocation.sentence.startswith("Layers 15–30")
    tiny = fetch_allocation(
        tracker.url, model="HuggingFaceTB/SmolLM2-135M-Instruct", layer_count=30, max_layers=0
    )
    assert not tiny.fits and tiny.start is None and "room for no layer" in tiny.sentence


def test_a_tracker_without_suggestions_is_a_sentence_not_a_crash() -> None:
    older = answering(lambda request: httpx.Response(404, json={"detail": "Not Found"}))
    error = failure(
        lambda: fetch_allocation(URL, model="m", layer_count=30, max_layers=4, transport=older)
    )
    assert error.reason == "no-suggestion" and "from this computer alone" in str(error)
    odd = json_reply({"fits": True, "start": 9, "end": 3, "sentence": "?"})
    error = failure(
        lambda: fetch_allocation(URL, model="m", layer_count=30, max_layers=4, transport=odd)
    )
    assert error.reason == "not-meshnet"
