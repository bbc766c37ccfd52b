"""The first bytes of a data-plane connection: one HTTP request, then frames or nothing.

websockets parses the opening request and, straight after it, reads whatever
follows as WebSocket frames. For a plain HTTP request that is wrong in two
ways an attacker (or a curious browser) meets at once:

- two pipelined requests on one connection: the second one is parsed as a
  frame, fails, and the connection closes before the first was answered;
- a request websockets cannot parse (garbage request line, a body, chunked
  encoding, a protocol other than HTTP/1.x) gets no answer at all.

:class:`PlainHttpConnection` replaces that first parser: a request that is
not a WebSocket upgrade is answered by ``process_request`` and whatever the
client sent after it is ignored until the connection closes (one request per
connection, as the ``Connection: close`` of every answer says); a request that
cannot be parsed gets a ``400`` (or ``414``/``431``) with a JSON reason. After
an upgrade request the frames are read once the ``101`` has been sent.
"""

from __future__ import annotations

import http
import json
import logging
from collections.abc import Generator
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.exceptions import InvalidMessage, RequestLineTooLong, SecurityError
from websockets.frames import CloseCode
from websockets.http11 import Request, Response
from websockets.protocol import Protocol, State
from websockets.server import ServerProtocol
from websockets.streams import StreamReader

logger = logging.getLogger(__name__)

BAD_REQUEST = "bad-request"


class PlainHttpConnection(ServerConnection):
    """A server connection whose first parser answers plain HTTP cleanly."""

    def __init__(self, protocol: ServerProtocol, *args: Any, **kwargs: Any) -> None:
        # The protocol's own parser has not read a byte yet: swap it before any arrive.
        protocol.parser = parse_request(protocol)
        next(protocol.parser)
        super().__init__(protocol, *args, **kwargs)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.protocol.reader.eof and self.protocol.state is not State.CLOSED:
            # The client left between its upgrade request and our 101: the EOF reached
            # parse_request while it held frames back, and nothing steps it again. Close
            # the protocol as its own parser would, else websockets finds the connection
            # still open here, and a handler's recv() (and the server's stop) waits on it.
            self.protocol.fail(CloseCode.ABNORMAL_CLOSURE, "the client left mid-handshake")
        super().connection_lost(exc)


def refusal(status: http.HTTPStatus, message: str) -> Response:
    body = json.dumps({"reason": BAD_REQUEST, "message": message}).encode("utf-8")
    headers = Headers(
        [
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(body))),
            ("Connection", "close"),
        ]
    )
    return Response(status.value, status.phrase, headers, body)


def _status_for(exc: Exception) -> http.HTTPStatus:
    if isinstance(exc, RequestLineTooLong):
        return http.HTTPStatus.REQUEST_URI_TOO_LONG
    if isinstance(exc, SecurityError):  # header line too long, too many headers
        return http.HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE
    return http.HTTPStatus.BAD_REQUEST


def _is_upgrade(request: Request) -> bool:
    return any(
        "upgrade" in value.lower().replace(" ", "").split(",")
        for value in request.headers.get_all("Connection")
    )


def parse_request(protocol: ServerProtocol) -> Generator[None]:
    """The parser of a fresh connection (a generator websockets steps per read)."""
    reader: StreamReader = protocol.reader
    try:
        request = yield from Request.parse(reader.read_line)
    except EOFError:
        # The client left before a whole request: there is nobody to answer.
        protocol.send_eof()
        protocol.parser = protocol.discard()
        next(protocol.parser)
        yield
        return
    except Exception as exc:  # whatever the request was, it is not one we answer
        protocol.handshake_exc = InvalidMessage("did not receive a valid HTTP request")
        protocol.handshake_exc.__cause__ = exc
        logger.info("unparseable HTTP request refused: %s", exc)
        status = _status_for(exc)
        # send_response() swaps in the discarding parser; this generator is not resumed.
        protocol.send_response(refusal(status, f"not a request this node answers: {exc}"))
        yield
        return
    protocol.events.append(request)
    upgrade = _is_upgrade(request)
    # Nothing is read as a frame before the handshake is answered: a client may not
    # send frames before the 101, and bytes pipelined after a request that will not be
    # upgraded are dropped (the answer closes the connection) rather than buffered.
    while protocol.state is State.CONNECTING:
        if not upgrade:
            reader.discard()
        yield
    yield from Protocol.parse(protocol)  # upgraded: the WebSocket frames follow
