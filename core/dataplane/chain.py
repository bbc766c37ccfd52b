"""Chained hops: a hop passes its output straight to its successor (docs/wire.md#chained-hops).

In a star route the client carries every hop's output to the next hop, two network legs
per hop and step. In a chain the client sends a step to the first hop only; each hop
forwards its output to the next over a *link*, a WebSocket it dials itself, and the last
hop answers the client. Every hop still sends the client a copy of its reply on its own
session, off the critical path, so receipts and audits work as in a star.

What binds a chain:
- the tracker's ticket names each hop's successor (``next``: endpoint and TLS pin), so a
  hop dials only that address and checks that certificate;
- the successor admits a link only from the node the ticket puts right before it, proved
  by that node's signature over the route session and both node ids (its key must hash
  to the id the ticket names), and only into a session the client itself opened with the
  same ticket asking for a chain. A hop cannot skip its successor or reorder the route.
- every step on a link is signed by the hop that passes it (``step_statement``: its
  number on the link and the digest of its tensor bytes *and* of the position, rewind,
  verify and draft the successor acts on); the successor refuses a step whose signature
  or number does not check and shows both to the client with its reply, so the client
  pins a forged field on the hop that signed it, never on the successor that obeyed it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from core.dataplane import frames, wire
from core.dataplane.tickets import RouteTicket, TicketGrant
from core.dataplane.tls_client import PinnedConnect
from core.errors import PinMismatch, ProtocolError

logger = logging.getLogger(__name__)

# A successor that does not answer within this is unreachable from here (a firewall that
# drops packets between two homes): the hop says so (chain-broken) well before a client's
# open times out, so the client runs the route as a star rather than dropping a node.
DIAL_TIMEOUT_S = 5.0
# How long a hop past the first waits for its predecessor's link: the dial and the link's
# admission, with room for a slow machine.
LINK_WAIT_S = 10.0


def _refused(message: str) -> ProtocolError:
    return ProtocolError(message, reason=wire.CHAIN_REFUSED)


def _broken(message: str) -> ProtocolError:
    return ProtocolError(message, reason=wire.CHAIN_BROKEN)


@dataclass(frozen=True)
class LinkKey:
    """One hop of one route session: where a link is admitted."""

    route_session_id: str
    epoch: int
    expires_at: float
    index: int

    @classmethod
    def of(cls, grant: TicketGrant) -> LinkKey:
        ticket = grant.ticket
        return cls(ticket.route_session_id, ticket.epoch, ticket.expires_at, grant.index)


def link_statement(ticket: RouteTicket, from_node: str, to_node: str) -> bytes:
    """The bytes a predecessor signs to link to its successor."""
    return wire.CHAIN_LINK_DOMAIN + wire.canonical_json(
        {
            "route_session_id": ticket.route_session_id,
            "epoch": ticket.epoch,
            "expires_at": ticket.expires_at,
            "from": from_node,
            "to": to_node,
        }
    )


def step_statement(
    ticket: RouteTicket, from_node: str, to_node: str, seq: int, input_sha256: str
) -> bytes:
    """The bytes a chained hop signs for the `seq`-th step it passes its successor:
    ``input_sha256`` is frames.step_input_digest of that step (tensor bytes, position,
    rewind, verify, draft), so every field the successor acts on is the sender's word."""
    return wire.CHAIN_STEP_DOMAIN + wire.canonical_json(
        {
            "route_session_id": ticket.route_session_id,
            "epoch": ticket.epoch,
            "from": from_node,
            "to": to_node,
            "seq": seq,
            "input_sha256": input_sha256,
        }
    )


def signed_forward(
    reply: bytes,
    step: dict[str, str],
    grant: TicketGrant,
    *,
    node_id: str,
    sign: Callable[[bytes], bytes],
    seq: int,
) -> bytes:
    """A hop's reply as its successor's `seq`-th step: the step keys it was given, the
    step's number on the link and its signature over both and the tensor bytes."""
    tensors = frames.tensor_bytes_digest(reply, frames.read_header(reply, len(reply)))
    digest = frames.step_input_digest(step, tensors)
    successor = grant.ticket.hops[grant.index + 1].node_id
    statement = step_statement(grant.ticket, node_id, successor, seq, digest)
    meta = {
        **step,
        frames.LINK_SEQ_KEY: str(seq),
        frames.LINK_SIGNATURE_KEY: wire.b64encode(sign(statement)),
    }
    forward, _ = frames.reframe(reply, meta, len(reply))
    return forward


def check_passed_step(
    data: bytes, header: frames.FrameHeader, grant: TicketGrant, peer: bytes, *, due: int
) -> dict[str, str]:
    """A step from the predecessor's link, checked before the hop acts on any of its
    fields (CHAIN_BROKEN otherwise): step number `due`, signed by the predecessor's key
    `peer` over the digest of its tensor bytes and step keys. Returns the metadata the
    hop's reply shows its client: that digest, the number and the signature."""
    previous = grant.previous
    seq_text = header.metadata.get(frames.LINK_SEQ_KEY)
    signature = header.metadata.get(frames.LINK_SIGNATURE_KEY)
    if (
        previous is None
        or seq_text is None
        # ASCII digits only ("²" is a digit to isdigit()), few enough for int()
        or not (seq_text.isascii() and seq_text.isdigit() and len(seq_text) <= 18)
    ):
        raise _broken("a step on a chain link carries its link_seq and link_signature")
    seq = int(seq_text)
    if seq != due:
        raise _broken(f"the previous hop passed step {seq} of this link; step {due} was due")
    digest = frames.step_input_digest(header.metadata, frames.tensor_bytes_digest(data, header))
    statement = step_statement(grant.ticket, previous.node_id, grant.hop.node_id, seq, digest)
    if not wire.verify_signature(peer, statement, signature):
        raise _broken(
            "the previous hop's signature does not cover this step as passed; it is refused"
        )
    return {
        frames.INPUT_SHA256_KEY: digest,
        frames.LINK_SEQ_KEY: seq_text,
        frames.LINK_SIGNATURE_KEY: str(signature),
    }


def link_message(
    signed_ticket: object,
    grant: TicketGrant,
    *,
    node_id: str,
    public_key: bytes,
    sign: Callable[[bytes], bytes],
) -> str:
    """The first message on a link: the ticket, and the sender's proof that it is the
    hop before the one it dials."""
    successor = grant.ticket.hops[grant.index + 1]
    statement = link_statement(grant.ticket, node_id, successor.node_id)
    return json.dumps(
        {
            "type": "link",
            "ticket": signed_ticket,
            "from": node_id,
            "public_key": wire.b64encode(public_key),
            "signature": wire.b64encode(sign(statement)),
        }
    )


def check_link(message: dict[str, Any], grant: TicketGrant) -> bytes:
    """Admit a link only from this hop's predecessor in the ticket (CHAIN_REFUSED); its
    public key, which signs every step it passes (step_statement)."""
    previous = grant.previous
    if previous is None:
        raise _refused("the first hop of a route takes its steps from the client, not a link")
    if previous.next is None:
        raise _refused("the route ticket offers no chain into this hop")
    sender = message.get("from")
    if sender != previous.node_id:
        raise _refused(
            f"only node {previous.node_id}, this hop's predecessor in the ticket, may pass it "
            f"steps; {str(sender)[:64]!r} may not"
        )
    try:
        key = wire.b64decode(str(message.get("public_key", "")))
    except ValueError as exc:
        raise _refused("the link's public_key is not base64") from exc
    if len(key) != wire.PUBLIC_KEY_BYTES or wire.node_id_for(key) != sender:
        raise _refused("the link's public_key is not the key of the node it names")
    statement = link_statement(grant.ticket, previous.node_id, grant.hop.node_id)
    if not wire.verify_signature(key, statement, message.get("signature")):
        raise _refused("the link's signature does not verify")
    return key


class ChainWaits:
    """Sessions opened as chain hops, found by the link their predecessor makes.

    The client opens every hop at once, so a link may arrive before the session it
    feeds: whichever comes first creates the slot, the other finds it."""

    def __init__(self) -> None:
        self._slots: dict[LinkKey, asyncio.Future[Any]] = {}
        self._claimed: set[LinkKey] = set()  # linked already: one link per hop

    def _slot(self, key: LinkKey) -> asyncio.Future[Any]:
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = asyncio.get_running_loop().create_future()
        return slot

    def offer(self, key: LinkKey, session: object) -> None:
        """A session opened as hop ``key.index`` of a chain waits for its link here."""
        slot = self._slot(key)
        if slot.done():
            raise _refused("another session of this route already waits for this hop's link")
        slot.set_result(session)

    async def claim(self, key: LinkKey, timeout_s: float) -> Any:
        """The session a link feeds (once: a second link to it is refused)."""
        if key in self._claimed:
            raise _refused("this hop of the route is linked already")
        slot = self._slot(key)
        try:
            session = await asyncio.wait_for(asyncio.shield(slot), timeout_s)
        except TimeoutError as exc:
            if self._slots.get(key) is slot:
                del self._slots[key]
            raise _refused(
                f"no session of this route opened here as a chained hop within {timeout_s:.0f} s"
            ) from exc
        except asyncio.CancelledError:
            if slot.cancelled():  # the session ended while its link was on the way
                raise _refused("the session this link would feed has ended") from None
            raise
        if key in self._claimed:
            raise _refused("this hop of the route is linked already")
        self._claimed.add(key)
        return session

    def withdraw(self, key: LinkKey) -> None:
        """The session ended: forget its slot (and cancel a link still waiting for it)."""
        self._claimed.discard(key)
        slot = self._slots.pop(key, None)
        if slot is not None and not slot.done():
            slot.cancel()

    def __len__(self) -> int:
        return len(self._slots)


async def dial_successor(
    signed_ticket: object,
    grant: TicketGrant,
    *,
    node_id: str,
    public_key: bytes,
    sign: Callable[[bytes], bytes],
    max_size: int | None,
    open_timeout_s: float,
) -> ClientConnection:
    """The link to the ticket's successor of this hop, admitted (CHAIN_BROKEN when it
    cannot be reached or its certificate is not the pinned one, CHAIN_REFUSED when it
    refuses the link)."""
    successor = grant.hop.next
    if successor is None:
        raise _refused("the route ticket names no successor for this hop")
    url = successor.endpoint.rstrip("/") + wire.SESSION_PATH
    options: dict[str, Any] = {
        "max_size": max_size,
        "compression": None,
        "open_timeout": open_timeout_s,
    }
    try:
        if successor.tls_pin:
            ws = await PinnedConnect(url, pin=successor.tls_pin, **options)
        else:  # a plaintext development node: the ticket names no pin
            ws = await connect(url, **options)
    except PinMismatch as exc:
        raise _broken(f"the next hop at {url} presented another certificate: {exc}") from exc
    except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as exc:
        raise _broken(f"cannot reach the next hop at {url}: {exc or type(exc).__name__}") from exc
    try:
        await ws.send(
            link_message(signed_ticket, grant, node_id=node_id, public_key=public_key, sign=sign)
        )
        answer = await asyncio.wait_for(ws.recv(), open_timeout_s)
    except (ConnectionClosed, TimeoutError) as exc:
        await ws.close()
        raise _broken(f"the next hop at {url} did not admit the link") from exc
    parsed = _parse(answer)
    if parsed.get("type") == "linked":
        logger.info("linked to the next hop", extra={"url": url})
        return ws
    await ws.close()
    reason = str(parsed.get("reason") or "")
    detail = str(parsed.get("message") or "no reason given")[:300]
    if reason == wire.CHAIN_REFUSED:
        raise _refused(f"the next hop refused the link: {detail}")
    raise _broken(f"the next hop refused the link: {detail} [{reason[:64]}]")


def _parse(answer: str | bytes) -> dict[str, Any]:
    if not isinstance(answer, str):
        return {}
    try:
        parsed = json.loads(answer)
    except (json.JSONDecodeError, RecursionError):
        return {}
    return parsed if isinstance(parsed, dict) else {}
