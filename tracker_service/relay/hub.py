"""The relay's live state: one link per node, the client streams multiplexed on it.

Nothing here is worth keeping across a restart: a link is a node's open
WebSocket, a stream a client's. Faults stay where they arise: a malformed
frame from a node ends that node's link (its streams see a close), a frame for
an unknown stream is dropped, a client that stops reading ends only its own
stream, and no error ever leaves the handler that met it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

from starlette.websockets import WebSocket

from tracker_service.domain.address_groups import address_group
from tracker_service.errors import LinkGone
from tracker_service.relay import mux
from tracker_service.relay.bandwidth import ByteBucket
from tracker_service.relay.metrics import RelayMetrics

log = logging.getLogger(__name__)

GOING_AWAY = 1001
PROTOCOL_ERROR = 1002
UNSUPPORTED = 1003
BAD_DATA = 1007
SERVICE_RESTART = 1012
TRY_AGAIN_LATER = 1013
INTERNAL_ERROR = 1011
MESSAGE_TOO_BIG = 1009


DEFAULT_NODE_MBIT_PER_S = 100.0
DEFAULT_NODE_BYTES_PER_S = DEFAULT_NODE_MBIT_PER_S * 1024 * 1024 / 8


@dataclass(frozen=True)
class RelaySettings:
    # Bytes per second each node's link may carry (both directions together); 0: no cap.
    # The default, 100 Mbit/s, is above a home uplink, so it binds only a node that
    # would take a shared relay's whole bandwidth.
    node_bytes_per_s: float = DEFAULT_NODE_BYTES_PER_S
    node_burst_bytes: float | None = None
    max_streams_per_node: int = 1024
    # Streams one client address group (an IPv4 address, an IPv6 /64) may hold open to
    # one node (0: no cap): without it one client took all of a node's streams and kept
    # it unreachable. High enough for a tracker's gateway, whose sessions share its address.
    max_streams_per_client: int = 128
    # Links one source address may hold (0: no cap): one machine cannot pose as many
    # relayed nodes. The tracker caps registrations per address too (store/node_caps.py).
    max_links_per_address: int = 64
    # Frames queued for one client before it counts as not reading.
    stream_queue: int = 256
    http_timeout_s: float = 10.0


class ClientStream:
    """One client connection carried on a link; a writer task drains what the node sent."""

    def __init__(
        self, stream_id: int, ws: WebSocket, queue_size: int, client: str = "unknown"
    ) -> None:
        self.stream_id = stream_id
        self.ws = ws
        self.client = client  # the client's address group (per-client cap)
        self.ended = False
        self._closer: asyncio.Task[None] | None = None
        self._closing = False  # a close is queued behind the frames still to go out
        self._queue: asyncio.Queue[tuple[int, Any]] = asyncio.Queue(queue_size)
        self._writer = asyncio.create_task(self._write(), name=f"relay-stream-{stream_id}")

    def deliver(self, kind: int, payload: bytes) -> bool:
        """Queue a node's frame for the client; False when the client is not reading."""
        if self.ended:
            return True
        try:
            self._queue.put_nowait((kind, payload))
        except asyncio.QueueFull:
            return False
        return True

    def end(self, code: int, reason: str) -> None:
        """Close the client's side once what is queued has gone out."""
        if self.ended:
            return
        self.ended = True
        with contextlib.suppress(asyncio.QueueFull):
            self._queue.put_nowait((mux.CLOSE, (code, reason)))
            self._closing = True
            return
        self._writer.cancel()  # not reading at all: close now, queued frames are lost
        self._closer = asyncio.create_task(_close_quietly(self.ws, code, reason))

    async def _write(self) -> None:
        try:
            while True:
                kind, payload = await self._queue.get()
                if kind == mux.CLOSE:
                    code, reason = payload
                    await _close_quietly(self.ws, code, reason)
                    return
                if kind == mux.TEXT:
                    await self.ws.send_text(payload.decode("utf-8"))
                else:
                    await self.ws.send_bytes(payload)
        except UnicodeDecodeError:
            self.ended = True
            await _close_quietly(self.ws, BAD_DATA, "the node sent a text frame that is not UTF-8")
        except Exception:  # the client went away mid-send: its reader sees the disconnect
            self.ended = True

    async def finish(self) -> None:
        """Let a queued close go out (bounded); otherwise stop the writer now."""
        self.ended = True
        if self._closing:
            with contextlib.suppress(TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(self._writer), 5.0)
        self._writer.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._writer


class NodeLink:
    """A node's one WebSocket to the relay and the streams it carries."""

    def __init__(
        self,
        node_id: str,
        ws: WebSocket,
        settings: RelaySettings,
        metrics: RelayMetrics,
        max_message: int,
        address: str = "unknown",
    ) -> None:
        self.node_id = node_id
        self.address = address  # where the link came from (its peer address)
        self.max_message = max_message
        self.ws = ws
        self.streams: dict[int, ClientStream] = {}
        self.closed = False
        self._settings = settings
        self._metrics = metrics
        self._bucket = ByteBucket(settings.node_bytes_per_s, settings.node_burst_bytes)
        self._ids = itertools.count(1)
        self._replies: dict[int, asyncio.Future[tuple[int, dict[str, str], bytes]]] = {}
        self._send_lock = asyncio.Lock()

    # -- towards the node ----------------------------------------------------------------

    async def send(self, frame: bytes) -> None:
        if self.closed:
            raise LinkGone(f"node {self.node_id}'s link to the relay closed")
        waited = await self._bucket.take(len(frame))
        if waited:
            self._metrics.throttled.inc(waited)
        try:
            async with self._send_lock:
                await self.ws.send_bytes(frame)
        except Exception as exc:
            raise LinkGone(f"node {self.node_id}'s link to the relay closed") from exc
        self._metrics.bytes.labels("to_node").inc(len(frame) - mux.HEADER_BYTES)

    def new_stream(self, ws: WebSocket, client: str = "unknown") -> ClientStream | str:
        """A new stream for `client`, or why not: the node's cap, or the client's share."""
        if len(self.streams) >= self._settings.max_streams_per_node:
            return "the node has too many relayed streams"
        group = address_group(client)
        cap = self._settings.max_streams_per_client
        if cap and sum(1 for s in self.streams.values() if s.client == group) >= cap:
            return f"{group} holds {cap} streams to this node, the limit per client address"
        stream = ClientStream(next(self._ids), ws, self._settings.stream_queue, group)
        self.streams[stream.stream_id] = stream
        return stream

    async def drop_stream(self, stream: ClientStream) -> None:
        self.streams.pop(stream.stream_id, None)
        await stream.finish()

    async def http(self, path: str) -> tuple[int, dict[str, str], bytes]:
        """Forward one GET to the node's data plane; its answer, or TimeoutError/LinkGone."""
        stream_id = next(self._ids)
        reply: asyncio.Future[tuple[int, dict[str, str], bytes]] = (
            asyncio.get_running_loop().create_future()
        )
        self._replies[stream_id] = reply
        try:
            await self.send(mux.encode(mux.HTTP, stream_id, path.encode("utf-8")))
            return await asyncio.wait_for(reply, self._settings.http_timeout_s)
        finally:
            self._replies.pop(stream_id, None)

    # -- from the node -------------------------------------------------------------------

    async def run(self) -> None:
        """Read the node's frames until its link closes; never raises."""
        reason = "the node's link to the relay closed"
        try:
            while True:
                message = await self.ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                data = message.get("bytes")
                if data is None:
                    self._metrics.bad_frames.labels("node").inc()
                    reason = "the node sent a text message on its link (mux frames are binary)"
                    await _close_quietly(self.ws, UNSUPPORTED, reason)
                    break
                try:
                    await self._dispatch(mux.decode(data))
                except mux.MuxError as exc:
                    self._metrics.bad_frames.labels("node").inc()
                    reason = f"the node sent a bad frame: {exc}"
                    log.info("relay link of %s closed: %s", self.node_id, exc)
                    await _close_quietly(self.ws, PROTOCOL_ERROR, str(exc))
                    break
        except Exception:  # the socket failed under us: same as a close
            log.debug("relay link of %s failed", self.node_id, exc_info=True)
        finally:
            await self.close(GOING_AWAY, reason)

    async def _dispatch(self, frame: mux.Frame) -> None:
        if frame.kind in (mux.TEXT, mux.BINARY, mux.REPLY):  # what the cap counts
            waited = await self._bucket.take(len(frame.payload))
            if waited:
                self._metrics.throttled.inc(waited)
            self._metrics.bytes.labels("to_client").inc(len(frame.payload))
        if frame.kind == mux.REPLY:
            reply = self._replies.pop(frame.stream_id, None)
            if reply is not None and not reply.done():
                try:
                    reply.set_result(mux.parse_reply(frame.payload))
                except mux.MuxError as exc:
                    self._metrics.bad_frames.labels("node").inc()
                    reply.set_exception(exc)
            return
        if frame.kind in (mux.OPEN, mux.HTTP):
            raise mux.MuxError("only the relay opens streams")
        stream = self.streams.get(frame.stream_id)
        if stream is None:
            return  # the client left already; late frames are expected
        if frame.kind == mux.CLOSE:
            code, reason = mux.parse_close(frame.payload)
            self.streams.pop(frame.stream_id, None)
            stream.end(_client_close_code(code), reason)
            return
        if not stream.deliver(frame.kind, frame.payload):
            self.streams.pop(frame.stream_id, None)
            stream.end(TRY_AGAIN_LATER, "the client did not read the node's replies")
            with contextlib.suppress(LinkGone):
                await self.send(
                    mux.encode(mux.CLOSE, frame.stream_id, mux.close_payload(1001, "client slow"))
                )

    async def close(self, code: int, reason: str) -> None:
        if self.closed:
            return
        self.closed = True
        for stream in list(self.streams.values()):
            stream.end(INTERNAL_ERROR if code != SERVICE_RESTART else SERVICE_RESTART, reason)
        self.streams.clear()
        for reply in self._replies.values():
            if not reply.done():
                reply.set_exception(LinkGone(reason))
        await _close_quietly(self.ws, code, reason)


class RelayHub:
    """Every link this relay process holds, by node id."""

    def __init__(self, settings: RelaySettings | None = None, metrics: RelayMetrics | None = None):
        self.settings = settings or RelaySettings()
        self.metrics = metrics or RelayMetrics()
        self.links: dict[str, NodeLink] = {}
        self._pending: dict[str, int] = {}  # links reserved per address, handshake under way
        self.metrics.watch(lambda: len(self.links), self._open_streams)

    def _open_streams(self) -> float:
        return float(sum(len(link.streams) for link in self.links.values()))

    def link_of(self, node_id: str) -> NodeLink | None:
        link = self.links.get(node_id)
        return None if link is None or link.closed else link

    def reserve_link(self, node_id: str, address: str) -> str | None:
        """Hold a place for a new link from `address` (None), or say why it is refused
        (over the per-address cap). The node's own link, which a new one replaces, does
        not count; handshakes still under way do, so a burst cannot slip past the cap.
        A reservation ends in serve_link, or with release_link when the handshake fails."""
        cap = self.settings.max_links_per_address
        group = address_group(address)
        held = self._pending.get(group, 0) + sum(
            1
            for link in self.links.values()
            if address_group(link.address) == group and link.node_id != node_id and not link.closed
        )
        if cap and held >= cap:
            return (
                f"{group} already holds {held} links to this relay, its limit per "
                "address; stop one of those nodes or use another relay"
            )
        self._pending[group] = self._pending.get(group, 0) + 1
        return None

    def release_link(self, address: str) -> None:
        group = address_group(address)
        left = self._pending.get(group, 0) - 1
        if left > 0:
            self._pending[group] = left
        else:
            self._pending.pop(group, None)

    async def serve_link(
        self, node_id: str, ws: WebSocket, max_message: int, address: str = "unknown"
    ) -> None:
        """Hold an accepted, authenticated link until it closes. A newer link of the same
        node replaces the old one: after a network change the old one may be half dead."""
        link = NodeLink(node_id, ws, self.settings, self.metrics, max_message, address)
        self.release_link(address)  # the reservation becomes the link itself
        old = self.links.get(node_id)
        self.links[node_id] = link
        if old is not None:
            self.metrics.links.labels("replaced").inc()
            await old.close(SERVICE_RESTART, "the node opened a newer link")
        self.metrics.links.labels("accepted").inc()
        log.info("relay link up: node %s", node_id)
        try:
            await link.run()
        finally:
            if self.links.get(node_id) is link:
                del self.links[node_id]
            log.info("relay link down: node %s", node_id)

    async def serve_stream(self, link: NodeLink, ws: WebSocket, path: str, client: str) -> None:
        """Carry one accepted client WebSocket to the node until either side closes."""
        stream = link.new_stream(ws, client)
        if isinstance(stream, str):
            self.metrics.streams.labels("session", "refused").inc()
            log.info("relay stream to %s refused for client %s: %s", link.node_id, client, stream)
            await _close_quietly(ws, TRY_AGAIN_LATER, stream)
            return
        sid = stream.stream_id
        self.metrics.streams.labels("session", "opened").inc()
        try:
            await link.send(mux.encode(mux.OPEN, sid, mux.open_payload(path, client)))
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    if not stream.ended:
                        code = int(message.get("code") or 1000)
                        stream.ended = True
                        await link.send(mux.encode(mux.CLOSE, sid, mux.close_payload(code, "")))
                    return
                text = message.get("text")
                kind = mux.TEXT if text is not None else mux.BINARY
                data = text.encode("utf-8") if text is not None else message.get("bytes") or b""
                if len(data) > link.max_message:
                    # What the node itself would do (1009), without breaking its link.
                    self.metrics.bad_frames.labels("client").inc()
                    stream.end(MESSAGE_TOO_BIG, "message too big")
                    await link.send(
                        mux.encode(mux.CLOSE, sid, mux.close_payload(MESSAGE_TOO_BIG, ""))
                    )
                    return
                await link.send(mux.encode(kind, sid, data))
        except LinkGone as exc:
            stream.end(GOING_AWAY, str(exc))
        except Exception:  # a client's broken socket ends its stream only
            log.debug("relay stream %d of %s failed", sid, link.node_id, exc_info=True)
            self.metrics.bad_frames.labels("client").inc()
            if not stream.ended and not link.closed:
                with contextlib.suppress(LinkGone):
                    await link.send(mux.encode(mux.CLOSE, sid, mux.close_payload(1011, "")))
        finally:
            await link.drop_stream(stream)


def _client_close_code(code: int) -> int:
    """A close code a server may send (1005/1006/1015 are never put on the wire)."""
    return 1000 if code in (1005, 1006, 1015) or not 1000 <= code <= 4999 else code


async def _close_quietly(ws: WebSocket, code: int, reason: str) -> None:
    with contextlib.suppress(Exception):
        await ws.close(code, reason[: mux.MAX_REASON_BYTES])


def client_address(scope: MutableMapping[str, Any], fallback: str = "unknown") -> str:
    client = scope.get("client")
    return str(client[0]) if client else fallback
