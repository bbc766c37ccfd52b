"""Every step on a chain link is signed by the hop that passes it (issue 35, attack 5):
the successor acts on no field (tensor bytes, position, rewind, verify, draft) its
predecessor did not sign, and shows the client the signature it obeyed."""

from __future__ import annotations

import pytest
import torch
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from core.dataplane import chain, frames, wire
from core.dataplane.tickets import RouteTicket, TicketGrant
from core.errors import ProtocolError


def _raw(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


@pytest.fixture
def link() -> tuple[Ed25519PrivateKey, TicketGrant, TicketGrant]:
    """(the first hop's key, its grant, the second hop's grant) of one two-hop ticket."""
    first, second = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    hops = [
        {"node_id": wire.node_id_for(_raw(k)), "start": s, "end": e, "effective_start": s}
        for k, (s, e) in ((first, (0, 2)), (second, (2, 4)))
    ]
    ticket = RouteTicket.from_json(
        {
            "route_session_id": "rs-chain-steps",
            "epoch": 1,
            "expires_at": 1893456000.0,
            "fingerprint": {"model_artifact_digest": "a" * 64, "runtime_recipe_digest": "b" * 64},
            "hops": hops,
        }
    )
    return first, TicketGrant(ticket, ticket.hops[0], 0), TicketGrant(ticket, ticket.hops[1], 1)


def _forward(
    key: Ed25519PrivateKey, grant: TicketGrant, step: dict[str, str], seq: int = 1
) -> bytes:
    reply = frames.encode_frame({frames.HIDDEN: torch.ones(1, 1, 4)}, {"compute_ms": "1.0"})
    return chain.signed_forward(
        reply, step, grant, node_id=grant.hop.node_id, sign=key.sign, seq=seq
    )


def test_a_signed_step_is_taken_and_shown_to_the_client(
    link: tuple[Ed25519PrivateKey, TicketGrant, TicketGrant],
) -> None:
    key, sender, receiver = link
    data = _forward(key, sender, {"position": "7", "rewind": "1"})
    header = frames.read_header(data, len(data))
    shown = chain.check_passed_step(data, header, receiver, _raw(key), due=1)
    tensors = frames.tensor_bytes_digest(data, header)
    want = frames.step_input_digest({"position": "7", "rewind": "1"}, tensors)
    assert shown[frames.INPUT_SHA256_KEY] == want
    assert shown[frames.LINK_SEQ_KEY] == "1"


@pytest.mark.parametrize("field", ["position", "rewind", "draft", "tensor"])
def test_a_field_changed_after_signing_is_refused(
    link: tuple[Ed25519PrivateKey, TicketGrant, TicketGrant], field: str
) -> None:
    key, sender, receiver = link
    data = _forward(key, sender, {"position": "7", "verify": "1", "draft": "3"})
    header = frames.read_header(data, len(data))
    meta = dict(header.metadata)
    if field == "tensor":
        data = data[:-1] + bytes([data[-1] ^ 1])
    else:
        meta.update({"position": "0", "rewind": "1", "draft": "4"})
        data, _ = frames.reframe(data, meta, len(data))
    header = frames.read_header(data, len(data))
    with pytest.raises(ProtocolError) as refused:
        chain.check_passed_step(data, header, receiver, _raw(key), due=1)
    assert refused.value.reason == wire.CHAIN_BROKEN


def test_a_step_out_of_turn_or_by_another_key_is_refused(
    link: tuple[Ed25519PrivateKey, TicketGrant, TicketGrant],
) -> None:
    key, sender, receiver = link
    data = _forward(key, sender, {"position": "7"}, seq=2)
    header = frames.read_header(data, len(data))
    with pytest.raises(ProtocolError, match="step 1 was due"):
        chain.check_passed_step(data, header, receiver, _raw(key), due=1)
    stranger = _raw(Ed25519PrivateKey.generate())
    with pytest.raises(ProtocolError, match="signature"):
        chain.check_passed_step(data, header, receiver, stranger, due=2)


@pytest.mark.parametrize("seq", ["²", "١", "9" * 5000, "9" * 19, "-1", ""])
def test_a_link_seq_that_is_not_a_short_ascii_count_is_refused(
    link: tuple[Ed25519PrivateKey, TicketGrant, TicketGrant], seq: str
) -> None:
    """int() takes "²" past isdigit() with a ValueError, and refuses 5,000 digits:
    either must be the protocol's refusal, not a crash of the hop's step."""
    key, sender, receiver = link
    data = _forward(key, sender, {"position": "7"})
    meta = {**frames.read_header(data, len(data)).metadata, frames.LINK_SEQ_KEY: seq}
    data, _ = frames.reframe(data, meta, len(data) + len(seq) * 4)
    header = frames.read_header(data, len(data))
    with pytest.raises(ProtocolError) as refused:
        chain.check_passed_step(data, header, receiver, _raw(key), due=1)
    assert refused.value.reason == wire.CHAIN_BROKEN
