"""Core errors map onto the wire's reason codes; sampling settings are range-checked."""

from __future__ import annotations

from typing import Any

import pytest

from core.dataplane import wire
from core.dataplane.hop import parse_sampling, wire_reason
from core.errors import (
    CapacityError,
    ConfigError,
    MeshnetError,
    ModelError,
    PositionError,
    ProtocolError,
    RuntimeInputError,
    SessionError,
    ShapeError,
    TicketError,
)
from core.runtime.sampling import SamplingParams


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (TicketError("x", reason=wire.WRONG_NODE), wire.WRONG_NODE),
        (ShapeError("x"), wire.BAD_SHAPE),
        (PositionError("x"), wire.POSITION_OUT_OF_RANGE),
        (CapacityError("x"), wire.NO_CAPACITY),
        (SessionError("x", reason="session-unknown"), wire.SESSION_EXPIRED),
        (RuntimeInputError("x", reason="bad-token-id"), wire.BAD_FRAME),
        (RuntimeInputError("x", reason="non-finite-input"), wire.BAD_FRAME),
        (RuntimeInputError("x", reason="step-failed"), wire.INTERNAL_ERROR),
        (RuntimeInputError("x", reason="non-finite-logits"), wire.INTERNAL_ERROR),
        (ConfigError("x", reason="bad-sampling"), wire.BAD_FRAME),
        (ProtocolError("x"), wire.BAD_FRAME),
        (ModelError("x"), wire.INTERNAL_ERROR),
    ],
)
def test_core_error_maps_to_the_wire_reason(error: MeshnetError, reason: str) -> None:
    assert wire_reason(error) == reason


def test_sampling_defaults_to_greedy_and_keeps_given_values() -> None:
    assert parse_sampling(None) == SamplingParams()
    given = {"temperature": 0.7, "top_k": 5, "top_p": 0.9, "seed": 3, "logprobs": 2, "n": 1}
    assert parse_sampling(given) == SamplingParams(0.7, 5, 0.9, 3, 2)


@pytest.mark.parametrize(
    "sampling",
    [
        [],
        {"temperature": -1},
        {"temperature": float("nan")},
        {"temperature": "hot"},
        {"top_k": -1},
        {"top_k": 1.5},
        {"top_p": 0},
        {"top_p": 1.5},
        {"seed": "x"},
        {"seed": 2**64},
        {"seed": -(2**63) - 1},
        {"logprobs": 21},
        {"logprobs": True},
    ],
)
def test_out_of_range_sampling_is_bad_request(sampling: Any) -> None:
    with pytest.raises(ProtocolError) as caught:
        parse_sampling(sampling)
    assert caught.value.reason == wire.BAD_REQUEST
