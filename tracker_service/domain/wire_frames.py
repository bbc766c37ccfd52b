"""Data-plane step frames, tracker side: safetensors bytes, checked before use.

The tracker re-implements the frame contract of ``docs/wire.md#frames`` instead of
importing the node's code, and ``tests/data/dataplane_vectors.json`` pins the
two. It needs three things only:

- encode the first hop's ``input_ids`` (int64, (B, T)) with ``position``;
- relay a hop's ``hidden`` reply to the next hop *as it came*, rewriting only
  the metadata (the node's ``compute_ms`` becomes the next hop's ``position``).
  The relay works on bytes, so any hidden dtype (F32, BF16, F16) passes
  through untouched and the tracker never needs the model's numerics;
- decode the last hop's reply (``token_ids``, ``top_ids``, ``top_logprobs``).

Every frame is size-checked and its header parsed by hand before safetensors
touches the tensor bytes: a node is a stranger on the internet.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import safetensors.numpy

from tracker_service.domain.wire import canonical_json
from tracker_service.errors import FrameError

INPUT_IDS = "input_ids"
HIDDEN = "hidden"
TOKEN_IDS = "token_ids"
TOP_IDS = "top_ids"
TOP_LOGPROBS = "top_logprobs"
POSITION_KEY = "position"
COMPUTE_MS_KEY = "compute_ms"
# A prefill reply's positions the hop took from its prefix cache (docs/wire.md#prefix-cache)
CACHED_KEY = "cached"
# Speculative steps (docs/wire.md#speculative-steps): "1" lets a frame start before the
# session's position (the hop forgets the rejected drafts first); "1" asks the last hop
# for its greedy token after every position of the step.
REWIND_KEY = "rewind"
VERIFY_KEY = "verify"
DRAFT_KEY = "draft"  # with verify: the drafted ids; the last hop answers those it keeps + 1
# The keys a hop acts on besides the tensor; a chained hop passes them on with its output.
STEP_KEYS = (POSITION_KEY, REWIND_KEY, VERIFY_KEY, DRAFT_KEY)
# A chained hop's reply names what its predecessor passed it (step_input_digest: tensor
# bytes and step keys), the step's number on the link and the predecessor's signature
# over both (docs/wire.md#chained-hops).
INPUT_SHA256_KEY = "input_sha256"
LINK_SEQ_KEY = "link_seq"
MAX_COUNT_DIGITS = 18  # a count in metadata (link_seq, cached): below 2**63
LINK_SIGNATURE_KEY = "link_signature"

MAX_HEADER_BYTES = 64 * 1024
HIDDEN_DTYPES = frozenset({"F32", "BF16", "F16"})
_ITEM_BYTES = {"I64": 8, "F32": 4, "BF16": 2, "F16": 2}
_METADATA = "__metadata__"


@dataclass(frozen=True)
class TensorEntry:
    dtype: str
    shape: tuple[int, ...]
    offsets: tuple[int, int]


@dataclass(frozen=True)
class FrameHeader:
    tensors: dict[str, TensorEntry]
    metadata: dict[str, str]
    data_start: int  # byte offset of the tensor data region


@dataclass(frozen=True)
class LastHopReply:
    """What the last hop returns per step: one sampled token per batch row (a verify
    step: the greedy token after each of the step's positions, row after row)."""

    token_ids: list[int]  # (B,), or (B, T) flattened for a verify step
    top_ids: list[list[int]]  # (B, k)
    top_logprobs: list[list[float]]  # (B, k)
    compute_ms: float | None
    cached: int = 0  # positions of this step the hop took from its prefix cache


def read_header(data: bytes, max_bytes: int) -> FrameHeader:
    """Parse and check a frame's header (and that its offsets fit the bytes)."""
    if len(data) > max_bytes:
        raise FrameError(f"a frame of {len(data)} bytes is over the limit of {max_bytes}")
    if len(data) < 8:
        raise FrameError(f"a frame needs an 8-byte header length, got {len(data)} bytes")
    (header_len,) = struct.unpack("<Q", data[:8])
    if header_len > min(MAX_HEADER_BYTES, len(data) - 8):
        raise FrameError(f"the frame header claims {header_len} bytes, more than possible")
    try:
        raw = json.loads(data[8 : 8 + header_len].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FrameError("the frame header is not JSON") from exc
    if not isinstance(raw, dict):
        raise FrameError("the frame header is not a JSON object")
    metadata = raw.pop(_METADATA, None) or {}
    if not isinstance(metadata, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        raise FrameError("frame metadata must map strings to strings")
    data_len = len(data) - 8 - header_len
    tensors = {name: _entry(name, entry, data_len) for name, entry in raw.items()}
    return FrameHeader(tensors, dict(metadata), 8 + header_len)


def _entry(name: str, entry: object, data_len: int) -> TensorEntry:
    if not isinstance(entry, dict):
        raise FrameError(f"tensor {name!r} has no dtype/shape entry")
    dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    if dtype not in _ITEM_BYTES:
        raise FrameError(f"tensor {name!r} has dtype {dtype!r}; frames carry {sorted(_ITEM_BYTES)}")
    if not isinstance(shape, list) or not all(_count(d) for d in shape):
        raise FrameError(f"tensor {name!r} has a malformed shape {shape!r}")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(_count(o) for o in offsets)):
        raise FrameError(f"tensor {name!r} has malformed data_offsets {offsets!r}")
    begin, end = offsets
    size = _ITEM_BYTES[dtype] * int(np.prod(shape, dtype=np.int64))
    if not begin <= end <= data_len or end - begin != size:
        raise FrameError(
            f"tensor {name!r} of shape {shape} needs {size} bytes, its offsets "
            f"{begin}..{end} do not fit the {data_len} data bytes"
        )
    return TensorEntry(dtype, tuple(shape), (begin, end))


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def encode(
    entries: Mapping[str, tuple[str, tuple[int, ...], bytes]], metadata: Mapping[str, str]
) -> bytes:
    """safetensors bytes from (dtype, shape, raw little-endian bytes) per tensor.

    The header lists ``__metadata__`` first, then the tensors in the order given,
    padded with spaces to 8 bytes: the layout safetensors itself writes.
    """
    header: dict[str, object] = {_METADATA: dict(metadata)}
    offset = 0
    for name, (dtype, shape, raw) in entries.items():
        header[name] = {
            "dtype": dtype,
            "shape": list(shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(raw for _, _, raw in entries.values())


def step_metadata(
    position: int,
    *,
    rewind: bool = False,
    verify: bool = False,
    draft: Sequence[int] | None = None,
) -> dict[str, str]:
    """A step frame's metadata: its cache position and the speculative flags it needs."""
    metadata = {POSITION_KEY: str(position)}
    if rewind:
        metadata[REWIND_KEY] = "1"
    if verify:
        metadata[VERIFY_KEY] = "1"
        if draft:
            metadata[DRAFT_KEY] = ",".join(str(int(t)) for t in draft)
    return metadata


def input_ids_frame(
    token_ids: list[list[int]],
    position: int,
    *,
    rewind: bool = False,
    verify: bool = False,
    draft: Sequence[int] | None = None,
) -> bytes:
    """The first hop's step: int64 ids of shape (B, T) and the cache position."""
    array = np.asarray(token_ids, dtype="<i8")
    if array.ndim != 2 or array.shape[1] < 1:
        raise FrameError(f"input_ids must be (B, T) with T >= 1, got shape {list(array.shape)}")
    return encode(
        {INPUT_IDS: ("I64", tuple(array.shape), array.tobytes())},
        step_metadata(position, rewind=rewind, verify=verify, draft=draft),
    )


def relay_hidden(
    data: bytes,
    position: int,
    *,
    max_bytes: int,
    hidden_size: int | None = None,
    rewind: bool = False,
    verify: bool = False,
    draft: Sequence[int] | None = None,
) -> bytes:
    """A non-last hop's reply turned into the next hop's step frame.

    Checks that the reply holds exactly one ``hidden`` tensor of rank 3; the
    tensor bytes are copied unchanged, only the metadata becomes the step's
    (``position`` and the speculative flags the first hop's frame carried).
    """
    header = read_header(data, max_bytes)
    if set(header.tensors) != {HIDDEN}:
        raise FrameError(
            f"a middle hop must reply with one 'hidden' tensor, got {sorted(header.tensors)}"
        )
    entry = header.tensors[HIDDEN]
    if entry.dtype not in HIDDEN_DTYPES or len(entry.shape) != 3:
        raise FrameError(
            f"'hidden' must be a rank-3 float tensor, "
            f"got {entry.dtype} of shape {list(entry.shape)}"
        )
    if hidden_size is not None and entry.shape[2] != hidden_size:
        raise FrameError(f"'hidden' has hidden size {entry.shape[2]}, the route's is {hidden_size}")
    begin, end = entry.offsets
    raw = data[header.data_start + begin : header.data_start + end]
    metadata = step_metadata(position, rewind=rewind, verify=verify, draft=draft)
    return encode({HIDDEN: (entry.dtype, entry.shape, raw)}, metadata)


def end_of(data: bytes, max_bytes: int) -> int:
    """The cache position a step frame reaches: its position plus its positions."""
    header = read_header(data, max_bytes)
    try:
        position = int(header.metadata.get(POSITION_KEY, ""))
    except ValueError as exc:
        raise FrameError("a step frame's metadata holds no integer 'position'") from exc
    return position + positions_of(data, max_bytes)


def positions_of(data: bytes, max_bytes: int) -> int:
    """How many positions a step frame carries (its one tensor's second axis)."""
    tensors = read_header(data, max_bytes).tensors
    shape = next(iter(tensors.values())).shape if len(tensors) == 1 else ()
    if len(shape) < 2:
        raise FrameError("a step frame holds one tensor of rank 2 or 3")
    return int(shape[1])


def hidden_shape(data: bytes, max_bytes: int) -> tuple[int, ...]:
    return read_header(data, max_bytes).tensors[HIDDEN].shape


def decode_last_hop(data: bytes, *, max_bytes: int, batch_size: int) -> LastHopReply:
    """The last hop's reply: token ids (B,), top ids (B, k), top log-probs (B, k)."""
    header = read_header(data, max_bytes)
    want = {TOKEN_IDS: "I64", TOP_IDS: "I64", TOP_LOGPROBS: "F32"}
    if set(header.tensors) != set(want):
        raise FrameError(
            f"the last hop must reply with {sorted(want)}, got {sorted(header.tensors)}"
        )
    for name, dtype in want.items():
        if header.tensors[name].dtype != dtype:
            raise FrameError(f"{name!r} must be {dtype}, got {header.tensors[name].dtype}")
    ids, tops, logprobs = (header.tensors[n].shape for n in (TOKEN_IDS, TOP_IDS, TOP_LOGPROBS))
    if (
        ids[:1] != (batch_size,)
        or len(ids) > 2
        or len(tops) != 2
        or tops != logprobs
        or tops[0] != batch_size
    ):
        raise FrameError(
            f"last hop shapes token_ids {list(ids)}, top_ids {list(tops)}, top_logprobs "
            f"{list(logprobs)} do not fit batch size {batch_size}"
        )
    try:
        arrays = safetensors.numpy.load(data)
    except Exception as exc:  # safetensors raises its own untyped SafetensorError
        raise FrameError(f"the last hop's reply is not valid safetensors: {exc}") from exc
    return LastHopReply(
        token_ids=[int(v) for v in arrays[TOKEN_IDS].reshape(-1)],
        top_ids=arrays[TOP_IDS].astype(np.int64).tolist(),
        top_logprobs=arrays[TOP_LOGPROBS].astype(np.float64).tolist(),
        compute_ms=_float_or_none(header.metadata.get(COMPUTE_MS_KEY)),
        cached=_cached(header.metadata),
    )


def tensor_bytes_digest(data: bytes, max_bytes: int) -> str:
    """SHA-256 (hex) of a frame's tensor bytes: the same for a hop's reply and the hidden
    states it passes on to its successor under other metadata."""
    header = read_header(data, max_bytes)
    return hashlib.sha256(memoryview(data)[header.data_start :]).hexdigest()


def input_digest_of(data: bytes, max_bytes: int) -> str | None:
    """What a chained hop says it was passed (``input_sha256``), or None."""
    return read_header(data, max_bytes).metadata.get(INPUT_SHA256_KEY)


@dataclass(frozen=True)
class PassedStep:
    """What a chained hop says its predecessor passed it, and the predecessor's word for
    it: the step's number on the link and the signature over both."""

    input_sha256: str | None
    seq: int | None
    signature: str | None


def passed_step_of(data: bytes, max_bytes: int) -> PassedStep:
    metadata = read_header(data, max_bytes).metadata
    seq = metadata.get(LINK_SEQ_KEY)
    return PassedStep(
        input_sha256=metadata.get(INPUT_SHA256_KEY),
        seq=_metadata_count(seq, LINK_SEQ_KEY) if seq is not None else None,
        signature=metadata.get(LINK_SIGNATURE_KEY),
    )


def step_keys_of(data: bytes, max_bytes: int) -> dict[str, str]:
    """A step frame's step keys (what every hop acts on besides the tensor)."""
    metadata = read_header(data, max_bytes).metadata
    return {key: metadata[key] for key in STEP_KEYS if key in metadata}


def step_input_digest(step: Mapping[str, str], tensors_sha256: str) -> str:
    """SHA-256 hex of canonical JSON ``{"step": {step keys}, "tensors_sha256": ...}``: what
    a chained hop acts on, which its predecessor signs and it reports."""
    body = {"step": {k: step[k] for k in STEP_KEYS if k in step}, "tensors_sha256": tensors_sha256}
    return hashlib.sha256(canonical_json(body)).hexdigest()


def compute_ms_of(data: bytes, max_bytes: int) -> float | None:
    return _float_or_none(read_header(data, max_bytes).metadata.get(COMPUTE_MS_KEY))


def cached_of(data: bytes, max_bytes: int) -> int:
    """Positions of a reply's step the hop took from its prefix cache (0: none said)."""
    return _cached(read_header(data, max_bytes).metadata)


def _cached(metadata: Mapping[str, str]) -> int:
    text = metadata.get(CACHED_KEY)
    if text is None or not _is_count(text):  # absent or not a count: nothing cached
        return 0
    return int(text)


def _is_count(text: str) -> bool:
    """ASCII digits ("²" passes isdigit()), few enough that int() cannot refuse them."""
    return text.isascii() and text.isdigit() and len(text) <= MAX_COUNT_DIGITS


def _metadata_count(text: str, key: str) -> int:
    """A count a node wrote in a frame's metadata, or its malformed frame."""
    if not _is_count(text):
        raise FrameError(f"the frame's {key} {text[:24]!r} is not a count")
    return int(text)


def _float_or_none(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None
