"""Node-signed hop receipts and reachability answers verify only as signed."""

from __future__ import annotations

import pytest

from core.dataplane import wire
from core.dataplane.challenge import answer_challenge, check_nonce, verify_challenge
from core.dataplane.receipts import HopReceipt, frame_digest, sign_receipt, verify_receipt
from core.errors import ProtocolError
from tests.core.dataplane.conftest import NODE_A_SEED, NODE_B_SEED, Key

NODE = Key.from_seed(NODE_A_SEED)
OTHER = Key.from_seed(NODE_B_SEED)


def _receipt(node_id: str = NODE.node_id) -> HopReceipt:
    return HopReceipt(
        "route-1", 2, node_id, start=0, end=2, steps=3, tokens=7, output_sha256=frame_digest(b"x")
    )


def test_signed_receipt_verifies_with_the_nodes_key_and_round_trips() -> None:
    signed = sign_receipt(_receipt(), NODE.sign)
    assert signed["receipt"]["range"] == [0, 2]
    assert verify_receipt(signed, NODE.public) == _receipt()


def test_receipt_with_changed_counts_fails_verification() -> None:
    signed = sign_receipt(_receipt(), NODE.sign)
    signed["receipt"]["tokens"] = 700
    with pytest.raises(ProtocolError):
        verify_receipt(signed, NODE.public)


def test_receipt_signed_in_another_nodes_name_is_refused() -> None:
    signed = sign_receipt(_receipt(node_id=NODE.node_id), OTHER.sign)
    with pytest.raises(ProtocolError):
        verify_receipt(signed, OTHER.public)


def test_challenge_answer_verifies_only_for_its_own_nonce() -> None:
    nonce = "ab" * 16
    answer = answer_challenge(nonce, node_id=NODE.node_id, public_key=NODE.public, sign=NODE.sign)
    assert verify_challenge(answer, nonce, NODE.node_id) == NODE.public
    with pytest.raises(ProtocolError):
        verify_challenge(answer, "cd" * 16, NODE.node_id)
    with pytest.raises(ProtocolError):
        verify_challenge(answer, nonce, OTHER.node_id)


def test_challenge_answer_from_a_key_that_does_not_derive_the_node_id_is_refused() -> None:
    nonce = "ab" * 16
    answer = answer_challenge(nonce, node_id=NODE.node_id, public_key=OTHER.public, sign=OTHER.sign)
    with pytest.raises(ProtocolError):
        verify_challenge(answer, nonce, NODE.node_id)


@pytest.mark.parametrize("nonce", [None, "", "abc", "zz" * 16, "ab" * 200, "ab" * 8 + "\n"])
def test_nonce_that_is_not_bounded_hex_is_refused(nonce: str | None) -> None:
    with pytest.raises(ProtocolError) as caught:
        check_nonce(nonce)
    assert caught.value.reason == wire.BAD_FRAME


def test_receipt_with_a_changed_output_digest_fails_verification() -> None:
    signed = sign_receipt(_receipt(), NODE.sign)
    signed["receipt"]["output_sha256"] = frame_digest(b"something else")
    with pytest.raises(ProtocolError):
        verify_receipt(signed, NODE.public)
