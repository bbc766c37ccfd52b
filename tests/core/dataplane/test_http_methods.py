"""The node's plain HTTP answers GET; HEAD gets headers only; every other method
is refused with 405 and a reason instead of being answered as a GET."""

from __future__ import annotations

import json
import socket

import pytest

from tests.core.dataplane.conftest import Node


def exchange(node: Node, request: bytes) -> tuple[str, dict[str, str], bytes]:
    with socket.create_connection(("127.0.0.1", node.server.port), timeout=10) as sock:
        sock.sendall(request)
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return status, headers, body


@pytest.mark.parametrize("method", ["DELETE", "PUT", "POST", "PATCH", "BREW", "X-GARBAGE"])
@pytest.mark.parametrize("path", ["/v1/health", "/v1/challenge?nonce=" + "ab" * 16, "/v1/session"])
def test_methods_other_than_get_and_head_are_refused_with_405(
    nodes: tuple[Node, Node], method: str, path: str
) -> None:
    status, headers, body = exchange(
        nodes[0], f"{method} {path} HTTP/1.1\r\nHost: n\r\n\r\n".encode()
    )
    assert status.split(" ", 2)[1] == "405"
    assert headers["allow"].startswith("GET")
    assert json.loads(body)["reason"] == "method-not-allowed"


def test_head_answers_the_get_headers_without_the_body(nodes: tuple[Node, Node]) -> None:
    status, headers, body = exchange(nodes[0], b"HEAD /v1/health HTTP/1.1\r\nHost: n\r\n\r\n")
    _, get_headers, get_body = exchange(nodes[0], b"GET /v1/health HTTP/1.1\r\nHost: n\r\n\r\n")
    assert status.split(" ", 2)[1] == "200"
    assert body == b""
    assert int(headers["content-length"]) == len(get_body) > 0
    assert headers["content-type"] == get_headers["content-type"]
