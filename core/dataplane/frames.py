"""Tensor frames: safetensors bytes <-> tensors, checked before anything is used.

A frame comes from another machine, so it is read in two stages: the header is
parsed and checked by hand first (size, names, dtypes, shapes, offsets,
metadata) and only then are tensor bytes read. Never pickle, never
``torch.load``: a frame can carry tensors and string metadata and nothing else.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass

import torch

from core.dataplane import wire
from core.errors import PositionError, ProtocolError, ShapeError

# A step frame holds at most three tensors; a header past this is not ours.
MAX_HEADER_BYTES = 64 * 1024

DTYPE_NAMES: dict[str, torch.dtype] = {
    "I64": torch.int64,
    "F32": torch.float32,
    "BF16": torch.bfloat16,
    "F16": torch.float16,
}
NAME_OF_DTYPE = {dtype: name for name, dtype in DTYPE_NAMES.items()}
# What the encoder can write (a test or a peer may send these); only DTYPE_NAMES are read.
_WRITABLE = NAME_OF_DTYPE | {
    torch.float64: "F64",
    torch.int32: "I32",
    torch.int16: "I16",
    torch.int8: "I8",
    torch.uint8: "U8",
    torch.bool: "BOOL",
}

INPUT_IDS = "input_ids"
HIDDEN = "hidden"
TOKEN_IDS = "token_ids"
TOP_IDS = "top_ids"
TOP_LOGPROBS = "top_logprobs"
POSITION_KEY = "position"
COMPUTE_MS_KEY = "compute_ms"
# A prefill reply's positions this hop took from its prefix cache instead of computing
# (absent: none); docs/wire.md#prefix-cache.
CACHED_KEY = "cached"
# Speculative decoding (docs/wire.md#speculative-steps). A step frame whose metadata
# holds REWIND_KEY "1" may start before the session's position: the hop first forgets
# the positions from there on (drafts the route rejected). VERIFY_KEY "1" asks the last
# hop for its greedy token after every position of the step, not only the last.
REWIND_KEY = "rewind"
VERIFY_KEY = "verify"
# With VERIFY_KEY: the drafted token ids (the step's last k inputs), comma-separated; the
# last hop then keeps drafts by sampling's own rule and answers them plus one token.
DRAFT_KEY = "draft"
MAX_DRAFT = 64
# The step keys a chained hop passes on with its output (docs/wire.md#chained-hops): the
# next hop's frame describes its own inputs as fully as a client's would.
STEP_KEYS = (POSITION_KEY, REWIND_KEY, VERIFY_KEY, DRAFT_KEY)
# A chained hop's reply to the client names what it was passed and acted on
# (step_input_digest: the step keys and the tensor bytes), so the client checks that its
# predecessor sent it the very hidden states its own reply shows, under the client's
# position, rewind, verify and draft.
INPUT_SHA256_KEY = "input_sha256"
# What a chained hop adds to each step it passes on: the step's number on the link (1, 2,
# ...) and its Ed25519 signature over that number and the step's input digest
# (chain.step_statement). The successor checks both before it acts and shows them to the
# client in its reply, so a forged field is pinned on the hop that signed it.
LINK_SEQ_KEY = "link_seq"
LINK_SIGNATURE_KEY = "link_signature"


@dataclass(frozen=True)
class TensorSpec:
    dtype: str  # safetensors dtype name, e.g. "F32"
    shape: tuple[int, ...]
    offsets: tuple[int, int] = (0, 0)  # [begin, end) within the data section


@dataclass(frozen=True)
class FrameHeader:
    tensors: dict[str, TensorSpec]
    metadata: dict[str, str]
    data_start: int = 0  # where tensor bytes begin: 8 + the header's length


@dataclass(frozen=True)
class Frame:
    tensors: dict[str, torch.Tensor]
    metadata: dict[str, str]


def step_frame_limit(hidden_size: int, max_positions: int, element_bytes: int = 4) -> int:
    """A ``max_frame_bytes`` that admits a prefill of ``max_positions`` hidden states
    (batch 1) with room for the header: what a node should pass its server."""
    return hidden_size * max_positions * element_bytes + MAX_HEADER_BYTES


def _bad(message: str) -> ProtocolError:
    return ProtocolError(message, reason=wire.BAD_FRAME)


def check_size(data: bytes, max_bytes: int) -> None:
    if len(data) > max_bytes:
        raise ProtocolError(
            f"a frame of {len(data)} bytes is over this node's limit of {max_bytes} bytes; "
            "send fewer positions per step",
            reason=wire.FRAME_TOO_LARGE,
        )


def read_header(data: bytes, max_bytes: int) -> FrameHeader:
    """Parse and check a frame's header without touching its tensor bytes."""
    check_size(data, max_bytes)
    if len(data) < 8:
        raise _bad(
            f"a safetensors frame starts with an 8-byte header length, got {len(data)} bytes"
        )
    (header_len,) = struct.unpack("<Q", data[:8])
    if header_len > min(MAX_HEADER_BYTES, len(data) - 8):
        raise _bad(
            f"the frame header claims {header_len} bytes but at most "
            f"{min(MAX_HEADER_BYTES, len(data) - 8)} are possible"
        )
    try:
        raw = json.loads(data[8 : 8 + header_len].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _bad("the frame header is not JSON") from exc
    except RecursionError as exc:  # nested thousands deep: the client's input, not our fault
        raise _bad("the frame header nests too deeply") from exc
    if not isinstance(raw, dict):
        raise _bad("the frame header is not a JSON object")
    metadata = raw.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        raise _bad("frame metadata must map strings to strings")
    tensors: dict[str, TensorSpec] = {}
    for name, entry in raw.items():
        if not isinstance(entry, dict):
            raise _bad(f"tensor {name!r} has no dtype/shape entry")
        dtype, shape = entry.get("dtype"), entry.get("shape")
        if not isinstance(dtype, str) or not isinstance(shape, list):
            raise _bad(f"tensor {name!r} lacks a dtype or shape")
        if not all(_count(d) for d in shape):
            raise _bad(f"tensor {name!r} has a malformed shape {shape!r}")
        offsets = entry.get("data_offsets")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(map(_count, offsets))):
            raise _bad(f"tensor {name!r} has malformed data_offsets {offsets!r}")
        tensors[name] = TensorSpec(dtype, tuple(shape), (offsets[0], offsets[1]))
    return FrameHeader(tensors, dict(metadata), 8 + header_len)


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def decode_frame(data: bytes, max_bytes: int) -> Frame:
    """Bytes -> tensors; every malformation is a ProtocolError, never a crash.

    Read by hand rather than through ``safetensors.torch.load``: this runs on every
    hop of every decode step, and the library's generic path costs several times
    more. The checks are the format's own: known dtypes, offsets that tile the
    data section exactly, each tensor's byte count equal to its shape's.
    """
    header = read_header(data, max_bytes)
    data_len = len(data) - header.data_start
    ordered = sorted(header.tensors.items(), key=lambda item: item[1].offsets)
    cursor = 0
    tensors: dict[str, torch.Tensor] = {}
    for name, spec in ordered:
        dtype = DTYPE_NAMES.get(spec.dtype)
        if dtype is None:
            raise ShapeError(
                f"tensor {name!r} has dtype {spec.dtype}; frames carry only "
                f"{', '.join(DTYPE_NAMES)}",
                reason=wire.BAD_SHAPE,
            )
        begin, end = spec.offsets
        expected = math.prod(spec.shape) * dtype.itemsize
        if end > data_len:
            raise _bad(f"tensor {name!r} claims bytes up to {end}, the frame has {data_len}")
        if begin != cursor or end - begin != expected:
            raise _bad(
                f"tensor {name!r} claims bytes [{begin}, {end}) but {expected} bytes at offset "
                f"{cursor} are what its shape {list(spec.shape)} needs"
            )
        cursor = end
        raw = bytearray(data[header.data_start + begin : header.data_start + end])
        tensor = torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)
        try:
            tensors[name] = tensor.reshape(spec.shape)
        except (TypeError, RuntimeError, ValueError) as exc:  # e.g. [0, 2**70]: no real shape
            raise _bad(f"tensor {name!r} has an impossible shape {list(spec.shape)}") from exc
    if cursor != data_len:
        raise _bad(f"the frame's tensors cover {cursor} of its {data_len} data bytes")
    return Frame(tensors, header.metadata)


def encode_frame(tensors: Mapping[str, torch.Tensor], metadata: Mapping[str, str]) -> bytes:
    """Tensors (moved to CPU, made contiguous) + string metadata -> safetensors bytes.

    Byte for byte what ``safetensors.torch.save`` writes (tensors ordered by
    element size, then name; header padded with spaces to 8 bytes), built by
    hand because this is on every hop of every decode step.
    """
    ready = sorted(
        ((name, t.detach().to("cpu").contiguous()) for name, t in tensors.items()),
        key=lambda item: (-item[1].element_size(), item[0]),
    )
    header: dict[str, object] = {"__metadata__": dict(metadata)}
    chunks: list[bytes] = []
    offset = 0
    for name, tensor in ready:
        if tensor.dtype not in _WRITABLE:
            raise ShapeError(f"tensor {name!r} has dtype {tensor.dtype}; frames cannot carry it")
        raw = tensor.reshape(-1).view(torch.uint8).numpy().tobytes() if tensor.numel() else b""
        header[name] = {
            "dtype": _WRITABLE[tensor.dtype],
            "shape": list(tensor.shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        offset += len(raw)
        chunks.append(raw)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def reframe(data: bytes, metadata: Mapping[str, str], max_bytes: int) -> tuple[bytes, FrameHeader]:
    """The same tensors under new metadata, without decoding them: how a client passes
    one hop's hidden states to the next. Returns the new frame and the old header."""
    header = read_header(data, max_bytes)
    body: dict[str, object] = {"__metadata__": dict(metadata)}
    for name, spec in sorted(header.tensors.items(), key=lambda item: item[1].offsets):
        body[name] = {
            "dtype": spec.dtype,
            "shape": list(spec.shape),
            "data_offsets": list(spec.offsets),
        }
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data[header.data_start :], header


def step_keys(metadata: Mapping[str, str]) -> dict[str, str]:
    """The step keys of a frame's metadata: what a chained hop forwards with its output."""
    return {key: metadata[key] for key in STEP_KEYS if key in metadata}


def step_input_digest(step: Mapping[str, str], tensors_sha256: str) -> str:
    """What a chained step's successor acts on, as one SHA-256 hex: the step keys (as the
    frame's metadata writes them) and the SHA-256 hex of the frame's tensor bytes, as
    canonical JSON ``{"step": {...}, "tensors_sha256": "..."}``."""
    body = {"step": {k: step[k] for k in STEP_KEYS if k in step}, "tensors_sha256": tensors_sha256}
    return hashlib.sha256(wire.canonical_json(body)).hexdigest()


def tensor_bytes_digest(data: bytes, header: FrameHeader) -> str:
    """SHA-256 of a frame's tensor bytes (its data section): equal for a reply and the
    same tensors passed on under other metadata."""
    return hashlib.sha256(memoryview(data)[header.data_start :]).hexdigest()


@dataclass(frozen=True)
class StepExpectation:
    """What one hop accepts as a step: derived from its shard and open session."""

    is_first: bool
    hidden_size: int
    hidden_dtype: torch.dtype
    batch_size: int
    position: int
    max_length: int


def check_step_header(header: FrameHeader, want: StepExpectation) -> int:
    """Check a step frame's header against the session; returns T (positions)."""
    name = INPUT_IDS if want.is_first else HIDDEN
    if set(header.tensors) != {name}:
        raise _bad(
            f"this hop expects exactly one tensor named {name!r}, got "
            f"{sorted(header.tensors) or 'none'}"
        )
    spec = header.tensors[name]
    dtype = torch.int64 if want.is_first else want.hidden_dtype
    if DTYPE_NAMES.get(spec.dtype) != dtype:
        raise ShapeError(
            f"{name!r} must be {NAME_OF_DTYPE[dtype]}, got {spec.dtype}", reason=wire.BAD_SHAPE
        )
    rank = 2 if want.is_first else 3
    if len(spec.shape) != rank:
        raise ShapeError(
            f"{name!r} must have rank {rank}, got shape {list(spec.shape)}", reason=wire.BAD_SHAPE
        )
    if spec.shape[0] != want.batch_size:
        raise ShapeError(
            f"{name!r} has batch size {spec.shape[0]}, the session was opened for "
            f"{want.batch_size}",
            reason=wire.BAD_SHAPE,
        )
    if not want.is_first and spec.shape[2] != want.hidden_size:
        raise ShapeError(
            f"'hidden' has hidden size {spec.shape[2]}, this model's is {want.hidden_size}",
            reason=wire.BAD_SHAPE,
        )
    steps = spec.shape[1]
    if steps < 1:
        raise ShapeError(f"{name!r} carries no positions (T = 0)", reason=wire.BAD_SHAPE)
    _check_position(header.metadata, want, steps)
    return steps


def _check_position(metadata: Mapping[str, str], want: StepExpectation, steps: int) -> None:
    text = metadata.get(POSITION_KEY)
    try:
        position = int(text) if text is not None else None
    except ValueError:
        position = None
    if position is None:
        raise _bad(f"frame metadata must carry an integer {POSITION_KEY!r}, got {text!r}")
    if position != want.position and not (
        metadata.get(REWIND_KEY) == "1" and 0 <= position < want.position
    ):
        raise PositionError(
            f"the frame is for position {position} but this session holds {want.position} "
            "positions; a step was lost or sent twice"
        )
    if position + steps > want.max_length:
        raise PositionError(
            f"{steps} positions from position {position} reach {position + steps}, past the "
            f"session's max_length of {want.max_length}"
        )


def draft_of(metadata: Mapping[str, str], positions: int) -> list[int] | None:
    """A verify frame's drafted token ids (None: no draft given)."""
    text = metadata.get(DRAFT_KEY)
    if text is None:
        return None
    try:
        draft = [int(part) for part in text.split(",")] if text else []
    except ValueError:
        raise _bad(f"{DRAFT_KEY!r} must be comma-separated token ids, got {text[:40]!r}") from None
    if not 1 <= len(draft) < positions or len(draft) > MAX_DRAFT:
        raise ShapeError(
            f"a step of {positions} positions carries 1 to {min(positions - 1, MAX_DRAFT)} "
            f"drafted tokens, got {len(draft)}",
            reason=wire.BAD_SHAPE,
        )
    return draft
