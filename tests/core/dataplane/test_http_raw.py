"""Raw bytes at a live node's data-plane port: pipelined requests are answered one
at a time and the connection closes cleanly; what is not HTTP/1.x gets a 400 with a
reason; nothing an attacker sends leaves a traceback in the node's log."""

from __future__ import annotations

import json
import logging
import socket
import time

import pytest

from tests.core.dataplane.conftest import Node

HEALTH = b"GET /v1/health HTTP/1.1\r\nHost: n\r\n\r\n"


def send_raw(node: Node, data: bytes, *, half_close: bool = False) -> bytes:
    """Everything the node sends back until it closes the connection."""
    with socket.create_connection(("127.0.0.1", node.server.port), timeout=10) as sock:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    return raw


def split_answer(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return int(status.split(" ", 2)[1]), headers, body


def no_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    bad = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert not bad, [f"{r.name}: {r.getMessage()}" for r in bad]


@pytest.mark.parametrize("count", [2, 100])
def test_pipelined_requests_get_the_first_answered_then_a_clean_close(
    nodes: tuple[Node, Node], count: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    raw = send_raw(nodes[0], HEALTH * count)
    status, headers, body = split_answer(raw)
    assert status == 200
    assert headers["connection"] == "close"
    assert len(body) == int(headers["content-length"])  # one answer, nothing after it
    assert json.loads(body)["node_id"] == nodes[0].key.node_id
    no_tracebacks(caplog)


def test_a_pipelined_request_after_one_asking_for_an_upgrade_is_not_read_as_a_frame(
    nodes: tuple[Node, Node], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    asks = (
        b"GET /v1/health HTTP/1.1\r\nHost: n\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
    )
    status, _, body = split_answer(send_raw(nodes[0], asks + HEALTH))
    assert status == 200
    assert json.loads(body)["node_id"] == nodes[0].key.node_id
    no_tracebacks(caplog)


def test_pipelined_head_then_get_answers_the_head_without_a_body(
    nodes: tuple[Node, Node], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    raw = send_raw(nodes[0], b"HEAD /v1/health HTTP/1.1\r\nHost: n\r\n\r\n" + HEALTH)
    status, headers, body = split_answer(raw)
    assert status == 200
    assert int(headers["content-length"]) > 0
    assert body == b""
    no_tracebacks(caplog)


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"\x00\x01\x02garbage\r\n\r\n",
        b"GET /\r\n\r\n",
        b"GET /v1/health HTTP/2.0\r\nHost: n\r\n\r\n",
        b"G\xc3\xa9T /v1/health HTTP/1.1\r\nHost: n\r\n\r\n",
        b"PUT /v1/health HTTP/1.1\r\nHost: n\r\nContent-Length: 5\r\n\r\nhello",
        b"POST /v1/health HTTP/1.1\r\nHost: n\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        b"GET /v1/health HTTP/1.1\r\nno colon here\r\n\r\n",
    ],
    ids=["binary", "two-words", "http2", "non-ascii", "put-body", "chunked", "bad-header"],
)
def test_requests_that_are_not_http_1_get_400_with_a_reason(
    nodes: tuple[Node, Node], request_bytes: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    status, headers, body = split_answer(send_raw(nodes[0], request_bytes))
    assert status == 400
    assert headers["connection"] == "close"
    answer = json.loads(body)
    assert answer["reason"] == "bad-request"
    assert answer["message"].startswith("not a request this node answers")
    no_tracebacks(caplog)
    # The node goes on serving.
    assert split_answer(send_raw(nodes[0], HEALTH))[0] == 200


def test_an_overlong_request_line_gets_414(nodes: tuple[Node, Node]) -> None:
    status, _, body = split_answer(
        send_raw(nodes[0], b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\n\r\n")
    )
    assert status == 414
    assert json.loads(body)["reason"] == "bad-request"


def test_a_client_that_leaves_mid_request_gets_no_answer_and_no_traceback(
    nodes: tuple[Node, Node], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    assert send_raw(nodes[0], b"GET /v1/health HTTP/1.1\r\nHost:", half_close=True) == b""
    no_tracebacks(caplog)


def test_a_client_that_leaves_right_after_its_upgrade_request_leaves_no_hanging_session(
    nodes: tuple[Node, Node], caplog: pytest.LogCaptureFixture
) -> None:
    """The EOF arrives before the 101 is sent (a route's open cancelled mid-handshake):
    the node must see the connection closed, not hold a session waiting for ``open``
    (which once also held the node's stop for its open timeout)."""
    caplog.set_level(logging.INFO)
    upgrade = (
        b"GET /v1/session HTTP/1.1\r\nHost: n\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    for _ in range(5):
        with socket.create_connection(("127.0.0.1", nodes[0].server.port), timeout=10) as sock:
            sock.sendall(upgrade)
    deadline = time.monotonic() + 20  # a bound on the poll, far below the 30 s open wait
    while "connection closed" not in caplog.text and time.monotonic() < deadline:
        time.sleep(0.05)
    status, _, body = split_answer(send_raw(nodes[0], HEALTH))
    assert status == 200 and json.loads(body)["node_id"] == nodes[0].key.node_id
    assert not [r for r in caplog.records if "open message" in r.getMessage()]
    no_tracebacks(caplog)
