"""The mux header of the relay link: one byte of kind, four of stream id, then payload.

Both directions of a node's link carry binary WebSocket messages of this form;
the node re-implements it (core/dataplane/relay_mux.py) and a test pins the
two byte for byte. Payloads of TEXT and BINARY are a client's messages as sent;
the relay never parses them.

    OPEN    relay -> node   JSON {"path": "/v1/session", "client": "<address>"}
    TEXT    both            one text message (UTF-8)
    BINARY  both            one binary message
    CLOSE   both            2-byte close code + UTF-8 reason
    HTTP    relay -> node   the GET path (with query) a client asked for
    REPLY   node -> relay   2-byte status, 2-byte header length, headers JSON, body
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass

from tracker_service.errors import MuxError

OPEN, TEXT, BINARY, CLOSE, HTTP, REPLY = 1, 2, 3, 4, 5, 6
KINDS = frozenset({OPEN, TEXT, BINARY, CLOSE, HTTP, REPLY})
HEADER = struct.Struct(">BI")
HEADER_BYTES = HEADER.size  # 5
MAX_STREAM_ID = 2**32 - 1
MAX_REASON_BYTES = 123  # what a WebSocket close frame can carry


@dataclass(frozen=True)
class Frame:
    kind: int
    stream_id: int
    payload: bytes


def encode(kind: int, stream_id: int, payload: bytes = b"") -> bytes:
    return HEADER.pack(kind, stream_id) + payload


def decode(message: bytes) -> Frame:
    """Split a link message; only the five header bytes are read."""
    if len(message) < HEADER_BYTES:
        raise MuxError(f"a mux frame has a {HEADER_BYTES}-byte header; got {len(message)} bytes")
    kind, stream_id = HEADER.unpack_from(message)
    if kind not in KINDS:
        raise MuxError(f"unknown mux frame kind {kind}")
    return Frame(kind, stream_id, message[HEADER_BYTES:])


def close_payload(code: int, reason: str) -> bytes:
    return struct.pack(">H", code) + reason.encode("utf-8")[:MAX_REASON_BYTES]


def parse_close(payload: bytes) -> tuple[int, str]:
    if len(payload) < 2:
        return 1005, ""
    (code,) = struct.unpack_from(">H", payload)
    return code, payload[2:].decode("utf-8", errors="replace")


def open_payload(path: str, client: str) -> bytes:
    return json.dumps({"path": path, "client": client}, separators=(",", ":")).encode("utf-8")


def parse_reply(payload: bytes) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of a node's HTTP reply; MuxError when malformed."""
    if len(payload) < 4:
        raise MuxError("an HTTP reply frame is shorter than its 4-byte prefix")
    status, size = struct.unpack_from(">HH", payload)
    try:
        headers = json.loads(payload[4 : 4 + size])
    except ValueError as exc:
        raise MuxError("the HTTP reply's headers are not JSON") from exc
    if not isinstance(headers, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
    ):
        raise MuxError("the HTTP reply's headers are not a JSON object of strings")
    if not 100 <= status <= 599:
        raise MuxError(f"the HTTP reply's status {status} is not an HTTP status")
    return status, headers, payload[4 + size :]
