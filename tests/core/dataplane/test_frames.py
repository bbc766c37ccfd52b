"""Step frames: safetensors bytes are checked before any tensor is built."""

from __future__ import annotations

import struct

import pytest
import torch

from core.dataplane import frames, wire
from core.errors import MeshnetError

LIMIT = 64 * 1024


def _want(**overrides: object) -> frames.StepExpectation:
    base: dict[str, object] = dict(
        is_first=False,
        hidden_size=8,
        hidden_dtype=torch.float32,
        batch_size=1,
        position=3,
        max_length=10,
    )
    base.update(overrides)
    return frames.StepExpectation(**base)  # type: ignore[arg-type]


def _hidden_frame(
    shape: tuple[int, ...], position: str = "3", dtype: torch.dtype = torch.float32
) -> bytes:
    return frames.encode_frame({"hidden": torch.zeros(shape, dtype=dtype)}, {"position": position})


def test_encoded_frame_decodes_to_the_same_tensors_and_metadata() -> None:
    tensors = {"hidden": torch.randn(1, 2, 8), "ids": torch.tensor([[1, 2]])}
    decoded = frames.decode_frame(frames.encode_frame(tensors, {"position": "7"}), LIMIT)
    assert decoded.metadata == {"position": "7"}
    torch.testing.assert_close(decoded.tensors["hidden"], tensors["hidden"])
    assert decoded.tensors["ids"].tolist() == [[1, 2]]


def test_bfloat16_hidden_states_survive_the_round_trip() -> None:
    hidden = torch.randn(1, 3, 8).to(torch.bfloat16)
    decoded = frames.decode_frame(frames.encode_frame({"hidden": hidden}, {}), LIMIT)
    assert decoded.tensors["hidden"].dtype == torch.bfloat16
    assert torch.equal(decoded.tensors["hidden"], hidden)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", wire.BAD_FRAME),
        (b"garbage", wire.BAD_FRAME),
        (b"\xff" * 64, wire.BAD_FRAME),
        (struct.pack("<Q", 4) + b"nope", wire.BAD_FRAME),
        (struct.pack("<Q", 2) + b"[]", wire.BAD_FRAME),
        (struct.pack("<Q", 1 << 40) + b"{}", wire.BAD_FRAME),
        (b"\0" * (LIMIT + 1), wire.FRAME_TOO_LARGE),
    ],
)
def test_malformed_bytes_are_refused_with_a_reason_not_a_crash(data: bytes, reason: str) -> None:
    with pytest.raises(MeshnetError) as caught:
        frames.decode_frame(data, LIMIT)
    assert caught.value.reason == reason


def test_frame_whose_offsets_point_past_its_bytes_is_bad_frame() -> None:
    data = _hidden_frame((1, 2, 8))
    with pytest.raises(MeshnetError) as caught:
        frames.decode_frame(data[:-4], LIMIT)
    assert caught.value.reason == wire.BAD_FRAME


def test_unknown_dtype_is_bad_shape() -> None:
    data = frames.encode_frame({"hidden": torch.zeros(1, 1, 8, dtype=torch.float64)}, {})
    with pytest.raises(MeshnetError) as caught:
        frames.decode_frame(data, LIMIT)
    assert caught.value.reason == wire.BAD_SHAPE


def test_good_step_header_returns_the_number_of_positions() -> None:
    header = frames.read_header(_hidden_frame((1, 4, 8)), LIMIT)
    assert frames.check_step_header(header, _want()) == 4


@pytest.mark.parametrize(
    ("data", "want", "reason"),
    [
        (_hidden_frame((1, 2, 9)), _want(), wire.BAD_SHAPE),
        (_hidden_frame((2, 2, 8)), _want(), wire.BAD_SHAPE),
        (_hidden_frame((2, 8)), _want(), wire.BAD_SHAPE),
        (_hidden_frame((1, 0, 8)), _want(), wire.BAD_SHAPE),
        (_hidden_frame((1, 2, 8), dtype=torch.float16), _want(), wire.BAD_SHAPE),
        (_hidden_frame((1, 2, 8), position="2"), _want(), wire.POSITION_OUT_OF_RANGE),
        (_hidden_frame((1, 8, 8)), _want(), wire.POSITION_OUT_OF_RANGE),
        (_hidden_frame((1, 2, 8), position="three"), _want(), wire.BAD_FRAME),
        (frames.encode_frame({"hidden": torch.zeros(1, 2, 8)}, {}), _want(), wire.BAD_FRAME),
        (_hidden_frame((1, 2, 8)), _want(is_first=True), wire.BAD_FRAME),
        (
            frames.encode_frame({"input_ids": torch.zeros(1, 2)}, {"position": "3"}),
            _want(is_first=True),
            wire.BAD_SHAPE,
        ),
        (
            frames.encode_frame(
                {"hidden": torch.zeros(1, 2, 8), "extra": torch.zeros(1)}, {"position": "3"}
            ),
            _want(),
            wire.BAD_FRAME,
        ),
    ],
)
def test_step_header_that_does_not_fit_the_session_is_refused(
    data: bytes, want: frames.StepExpectation, reason: str
) -> None:
    with pytest.raises(MeshnetError) as caught:
        frames.check_step_header(frames.read_header(data, LIMIT), want)
    assert caught.value.reason == reason


def test_step_frame_limit_admits_a_full_prefill_frame_and_nothing_much_larger() -> None:
    limit = frames.step_frame_limit(hidden_size=8, max_positions=100)
    full = frames.encode_frame({"hidden": torch.zeros(1, 100, 8)}, {"position": "0"})
    frames.read_header(full, limit)
    with pytest.raises(MeshnetError):
        frames.read_header(b"\0" * (limit + 1), limit)


@pytest.mark.parametrize(
    "tensors",
    [
        {"hidden": torch.randn(1, 3, 8)},
        {"hidden": torch.randn(1, 2, 8).to(torch.bfloat16)},
        {"input_ids": torch.tensor([[1, 2, 3]])},
        {
            "token_ids": torch.tensor([5]),
            "top_ids": torch.tensor([[1, 2]]),
            "top_logprobs": torch.tensor([[-0.1, -2.0]]),
        },
        {"token_ids": torch.tensor([5]), "top_ids": torch.zeros((1, 0), dtype=torch.int64)},
    ],
)
def test_hand_written_frames_are_the_bytes_safetensors_writes(tensors: dict) -> None:
    import safetensors.torch

    ours = frames.encode_frame(tensors, {"position": "4"})
    assert ours == safetensors.torch.save(tensors, metadata={"position": "4"})
    decoded = frames.decode_frame(ours, LIMIT)
    for name, tensor in tensors.items():
        assert decoded.tensors[name].dtype == tensor.dtype
        assert torch.equal(decoded.tensors[name], tensor)


def _with_offsets(data: bytes, old: bytes, new: bytes) -> bytes:
    """The same frame with one data_offsets entry rewritten (header length kept)."""
    (length,) = struct.unpack("<Q", data[:8])
    header = data[8 : 8 + length].replace(old, new)
    header = header.rstrip(b" ") + b" " * (length - len(header.rstrip(b" ")))
    assert len(header) == length
    return data[:8] + header + data[8 + length :]


def test_frame_whose_tensors_overlap_or_leave_a_gap_is_bad_frame() -> None:
    data = frames.encode_frame(
        {"a": torch.zeros(2, dtype=torch.int64), "b": torch.zeros(2, dtype=torch.int64)}, {}
    )
    overlapping = _with_offsets(data, b'"data_offsets":[16,32]', b'"data_offsets":[8,24]')
    for bad in (overlapping, data + b"\0" * 8):
        with pytest.raises(MeshnetError) as caught:
            frames.decode_frame(bad, LIMIT)
        assert caught.value.reason == wire.BAD_FRAME


def test_reframe_keeps_the_tensor_bytes_and_replaces_the_metadata() -> None:
    hidden = torch.randn(1, 2, 8)
    reply = frames.encode_frame({"hidden": hidden}, {"compute_ms": "3.25"})
    passed_on, old = frames.reframe(reply, {"position": "9"}, LIMIT)
    assert old.metadata == {"compute_ms": "3.25"}
    assert passed_on == frames.encode_frame({"hidden": hidden}, {"position": "9"})
    decoded = frames.decode_frame(passed_on, LIMIT)
    assert torch.equal(decoded.tensors["hidden"], hidden)
    assert decoded.metadata == {"position": "9"}


def test_zero_byte_tensor_with_an_impossible_shape_is_bad_frame() -> None:
    header = b'{"hidden":{"dtype":"F32","shape":[0,1180591620717411303424],"data_offsets":[0,0]}}'
    header += b" " * (-len(header) % 8)
    huge = struct.pack("<Q", len(header)) + header
    with pytest.raises(MeshnetError) as caught:
        frames.decode_frame(huge, LIMIT)
    assert caught.value.reason == wire.BAD_FRAME
