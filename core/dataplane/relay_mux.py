"""The node's side of the relay link's mux header (the tracker's relay re-implements it
in tracker_service/relay/mux.py; a test pins the two byte for byte).

One binary WebSocket message per frame: kind (1 byte), stream id (4 bytes,
big-endian), payload. See that module's docstring for the kinds.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping

from core.errors import ProtocolError

OPEN, TEXT, BINARY, CLOSE, HTTP, REPLY = 1, 2, 3, 4, 5, 6
_KINDS = frozenset({OPEN, TEXT, BINARY, CLOSE, HTTP, REPLY})
_HEADER = struct.Struct(">BI")
HEADER_BYTES = _HEADER.size
MAX_REASON_BYTES = 123


def encode(kind: int, stream_id: int, payload: bytes = b"") -> bytes:
    return _HEADER.pack(kind, stream_id) + payload


def decode(message: bytes) -> tuple[int, int, bytes]:
    """(kind, stream id, payload); ProtocolError for anything else."""
    if len(message) < HEADER_BYTES:
        raise ProtocolError(f"a relay frame of {len(message)} bytes has no mux header")
    kind, stream_id = _HEADER.unpack_from(message)
    if kind not in _KINDS:
        raise ProtocolError(f"unknown relay frame kind {kind}")
    return kind, stream_id, message[HEADER_BYTES:]


def close_payload(code: int, reason: str) -> bytes:
    return struct.pack(">H", code) + reason.encode("utf-8")[:MAX_REASON_BYTES]


def parse_close(payload: bytes) -> tuple[int, str]:
    if len(payload) < 2:
        return 1005, ""
    (code,) = struct.unpack_from(">H", payload)
    return code, payload[2:].decode("utf-8", errors="replace")


def parse_open(payload: bytes) -> tuple[str, str]:
    """(path, client address) of an OPEN frame."""
    try:
        opened = json.loads(payload)
    except ValueError as exc:
        raise ProtocolError("a relay OPEN frame is not JSON") from exc
    if not isinstance(opened, dict) or not isinstance(opened.get("path"), str):
        raise ProtocolError("a relay OPEN frame names no path")
    return opened["path"], str(opened.get("client") or "relay")


def reply_payload(status: int, headers: Mapping[str, str], body: bytes) -> bytes:
    encoded = json.dumps(dict(headers), separators=(",", ":")).encode("utf-8")
    return struct.pack(">HH", status, len(encoded)) + encoded + body
