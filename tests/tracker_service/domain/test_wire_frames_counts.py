"""Counts a node writes in a frame's metadata are read as short ASCII digit strings,
never with a ValueError out of int() that the route client does not catch (5,000
digits, or "²", which isdigit() accepts): a bad ``link_seq`` is the node's malformed
frame (FrameError, which fails the hop that sent it); a bad ``cached`` reads as 0."""

from __future__ import annotations

import json
import struct

import pytest

from tracker_service.domain import wire_frames

BAD_COUNTS = ["²", "١", "9" * 5000, "9" * 19, "-1", "", "1.5"]


def _frame(metadata: dict[str, str]) -> bytes:
    body = {
        "__metadata__": metadata,
        "hidden_states": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
    }
    text = json.dumps(body, ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"\0" * 4


def test_well_formed_counts_are_read() -> None:
    data = _frame({wire_frames.LINK_SEQ_KEY: "3", wire_frames.CACHED_KEY: "12"})
    assert wire_frames.passed_step_of(data, len(data)).seq == 3
    assert wire_frames.cached_of(data, len(data)) == 12
    bare = _frame({})
    assert wire_frames.passed_step_of(bare, len(bare)).seq is None
    assert wire_frames.cached_of(bare, len(bare)) == 0


@pytest.mark.parametrize("count", BAD_COUNTS)
def test_a_link_seq_that_is_not_a_short_ascii_count_is_a_frame_error(count: str) -> None:
    data = _frame({wire_frames.LINK_SEQ_KEY: count})
    with pytest.raises(wire_frames.FrameError, match="link_seq"):
        wire_frames.passed_step_of(data, len(data))


@pytest.mark.parametrize("count", BAD_COUNTS)
def test_a_cached_count_that_is_not_a_short_ascii_count_reads_as_nothing_cached(
    count: str,
) -> None:
    """``cached`` only informs (a bad one reads as 0), but never raises out of int()."""
    data = _frame({wire_frames.CACHED_KEY: count})
    assert wire_frames.cached_of(data, len(data)) == 0
