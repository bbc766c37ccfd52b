"""Allocation: holes first, the bottleneck raised, too little memory said, the endpoint."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.tracker_service.conftest import register
from tests.tracker_service.helpers import FakeNode, identity_block
from tracker_service.domain.allocation import (
    REASON_BOTTLENECK,
    REASON_HOLE,
    REASON_TOO_LITTLE_MEMORY,
    Placement,
    choose_range,
    hole_runs,
    layer_rates,
)

MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"


def test_layer_rates_add_each_nodes_rate_over_its_range() -> None:
    rates = layer_rates(6, [Placement(0, 4, 2.0), Placement(2, 6, 3.0)])
    assert rates == [2.0, 2.0, 5.0, 5.0, 3.0, 3.0]
    assert hole_runs(layer_rates(6, [Placement(1, 3, 1.0)])) == [(0, 1), (3, 6)]


def test_an_empty_swarm_gets_its_first_node_at_layer_zero_for_all_it_can_hold() -> None:
    choice = choose_range(30, [0.0] * 30, max_layers=12, speed=120.0, model="m")
    assert (choice.start, choice.end, choice.reason) == (0, 12, REASON_HOLE)
    assert choice.holes_after == 18


def test_a_hole_is_filled_first_even_where_other_layers_are_slower() -> None:
    # Layers 0-10 are served slowly, 10-20 fast, 20-30 by nobody.
    rates = layer_rates(30, [Placement(0, 10, 0.5), Placement(10, 20, 50.0)])
    choice = choose_range(30, rates, max_layers=10, speed=1000.0)
    assert (choice.start, choice.end) == (20, 30)
    assert choice.reason == REASON_HOLE and choice.holes_after == 0
    assert "no server right now" in choice.sentence and "closes the last hole" in choice.sentence


def test_a_hole_wider_than_the_node_is_closed_as_far_as_it_reaches() -> None:
    rates = layer_rates(30, [Placement(0, 5, 1.0)])
    choice = choose_range(30, rates, max_layers=10, speed=10.0)
    assert choice.holes_after == 15 and choice.start is not None
    assert choice.start >= 5 and choice.end is not None and choice.end - choice.start == 10


def test_with_no_hole_the_range_that_most_raises_the_bottleneck_is_chosen() -> None:
    rates = layer_rates(30, [Placement(0, 30, 10.0), Placement(0, 18, 10.0)])
    choice = choose_range(30, rates, max_layers=12, speed=120.0, model="m")
    assert (choice.start, choice.end) == (18, 30)
    assert choice.reason == REASON_BOTTLENECK
    assert choice.bottleneck_before == 10.0 and choice.bottleneck_after == 20.0
    assert choice.sentence.startswith("Layers 18–30 of m have the fewest servers right now")


def test_a_fast_node_takes_fewer_layers_where_that_lifts_the_bottleneck_more() -> None:
    # One thin layer: spreading 100 layer-tokens/s over 12 layers adds 8.3, over 3 adds 33.
    rates = [40.0] * 30
    rates[20] = 5.0
    choice = choose_range(30, rates, max_layers=12, speed=100.0)
    assert choice.start is not None and choice.end is not None
    assert choice.start <= 20 < choice.end and choice.end - choice.start == 3
    assert choice.bottleneck_after > 35.0


def test_a_node_with_room_for_no_layer_is_told_so_in_a_sentence() -> None:
    choice = choose_range(30, [0.0] * 30, max_layers=0, speed=10.0, model="m")
    assert not choice.fits and choice.start is None
    assert choice.reason == REASON_TOO_LITTLE_MEMORY
    assert "room for no layer of m" in choice.sentence and "memory cap" in choice.sentence


def _ask(client: TestClient, **params: object) -> dict[str, object]:
    response = client.get("/api/v1/allocation", params={"model": MODEL, **params})
    assert response.status_code == 200, response.text
    data: dict[str, object] = response.json()
    return data


def test_the_endpoint_sends_a_newcomer_to_the_hole_the_registry_leaves(
    client: TestClient,
) -> None:
    assert register(client, FakeNode(), identity_block(0, 15)).status_code == 200
    data = _ask(client, max_layers=15)
    assert (data["start"], data["end"], data["reason"]) == (15, 30, "hole")
    assert data["nodes"] == 1 and data["layer_count"] == 30
    assert "Layers 15–30" in str(data["sentence"])


def test_the_endpoint_spreads_nodes_that_ask_before_registering(client: TestClient) -> None:
    first = _ask(client, max_layers=12, layer_count=30, node_id="a" * 32)
    second = _ask(client, max_layers=12, layer_count=30, node_id="b" * 32)
    third = _ask(client, max_layers=12, layer_count=30, node_id="c" * 32)
    ranges = [(d["start"], d["end"]) for d in (first, second, third)]
    assert ranges[0] == (0, 12) and ranges[1] == (12, 24)
    assert ranges[2][1] == 30 and third["holes_after"] == 0


def test_the_endpoint_tells_a_node_without_memory_so(client: TestClient) -> None:
    data = _ask(client, max_layers=0, layer_count=30)
    assert data["fits"] is False and data["start"] is None
    assert data["reason"] == "too-little-memory"


def test_the_endpoint_refuses_unknown_models_and_bad_input_with_4xx(client: TestClient) -> None:
    unknown = client.get("/api/v1/allocation", params={"model": "nope", "max_layers": 3})
    assert unknown.status_code == 404 and unknown.json()["reason"] == "unknown-model"
    negative = client.get("/api/v1/allocation", params={"model": MODEL, "max_layers": -1})
    assert negative.status_code == 422 and negative.json()["reason"] == "invalid-request"
    nan = client.get(
        "/api/v1/allocation",
        params={"model": MODEL, "max_layers": 3, "layer_count": 30, "speed": "nan"},
    )
    assert nan.status_code == 422
    assert register(client, FakeNode(), identity_block(0, 15)).status_code == 200
    other = client.get(
        "/api/v1/allocation", params={"model": MODEL, "max_layers": 3, "layer_count": 31}
    )
    assert other.status_code == 422 and other.json()["reason"] == "layer-count-mismatch"


def test_a_node_its_uplink_limits_takes_its_whole_room() -> None:
    # As in the thin-layer case above, but 8 tokens/s leave through the uplink whatever
    # the length: a shorter range would only waste layers the node could serve.
    rates = [40.0] * 30
    rates[20] = 5.0
    choice = choose_range(30, rates, max_layers=12, speed=100.0, uplink=8.0)
    assert choice.start is not None and choice.end is not None
    assert choice.start <= 20 < choice.end and choice.end - choice.start == 12
    assert choice.bottleneck_after == 13.0


def test_the_endpoint_counts_a_reserved_range_at_the_rate_the_uplink_allows(
    client: TestClient,
) -> None:
    first = _ask(client, max_layers=30, layer_count=30, speed=300.0, uplink=2.0, node_id="a" * 32)
    assert (first["start"], first["end"]) == (0, 30)
    second = _ask(client, max_layers=30, layer_count=30, speed=300.0, node_id="b" * 32)
    assert second["bottleneck_before"] == 2.0  # not 300 / 30: the uplink carries 2 tokens/s
    zero = client.get(
        "/api/v1/allocation",
        params={"model": MODEL, "max_layers": 3, "layer_count": 30, "uplink": 0},
    )
    assert zero.status_code == 422
