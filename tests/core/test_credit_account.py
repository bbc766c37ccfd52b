"""The account statement the app signs (core/network/credit_account.py), byte for byte, and the
tracker's own check of it (tracker_service/domain/credit_rules.py) accepting it."""

from __future__ import annotations

import re

import pytest

from core.identity.keypair import NodeIdentity, verify
from core.network.credit_account import (
    MAX_LABEL_LEN,
    account_for,
    clean_label,
    signed_claim_body,
    this_computer_claim,
)
from tracker_service.domain.credit_rules import (
    ACCOUNT_PATTERN,
    LinkRefused,
    check_claim,
    parse_claim,
)
from tracker_service.store.hashed_secrets import hash_secret

SEED = bytes(range(32))
NODE_ID = "56475aa75463474c0285df5dbf2bcab7"
SIGNED_AT = 1796200000
EXPECTED = (
    b"meshnet.credit-account.v2\n"
    b'{"account":"pc-56475aa75463474c0285df5dbf2bcab7","api_key_sha256":"",'
    b'"display_name":"Zo\xc3\xab Lovelace",'
    b'"node_ids":["56475aa75463474c0285df5dbf2bcab7"],"signed_at":1796200000,'
    b'"team":"analytical"}'
)
# Ed25519 is deterministic: this seed signs EXPECTED so, on every machine.
EXPECTED_SIGNATURE = (
    "sblCu6WHS+PyMKC5c6gTsfRrqurd3pHs6MS/54TfYIPDgLaracGdsVACqCv/0ajeTsBuYBpAZ9UTyednOqzvDg=="
)


def test_the_statement_is_the_domain_line_and_canonical_json_byte_for_byte() -> None:
    identity = NodeIdentity.from_seed(SEED)
    assert identity.node_id == NODE_ID
    claim = this_computer_claim(identity, " Zoë  Lovelace ", "analytical\n", now=SIGNED_AT)
    assert claim.message() == EXPECTED
    body = signed_claim_body(claim, identity)
    assert body == {
        "account": f"pc-{NODE_ID}",
        "display_name": "Zoë Lovelace",
        "team": "analytical",
        "signed_at": SIGNED_AT,
        "api_key_sha256": "",
        "signatures": {NODE_ID: EXPECTED_SIGNATURE},
    }
    assert verify(identity.public_key_raw, EXPECTED, EXPECTED_SIGNATURE)


def test_the_trackers_own_check_accepts_the_signed_body() -> None:
    identity = NodeIdentity.from_seed(SEED)
    body = signed_claim_body(this_computer_claim(identity, "Ada", "", now=SIGNED_AT), identity)
    claim, signatures = parse_claim(body)
    check_claim(claim, signatures, {NODE_ID: identity.public_key_raw}, now=SIGNED_AT + 5)
    assert claim.account == f"pc-{NODE_ID}" and claim.node_ids == (NODE_ID,)


def test_a_statement_that_names_a_key_is_accepted_with_that_key_only() -> None:
    identity = NodeIdentity.from_seed(SEED)
    claim = this_computer_claim(identity, "Ada", "", now=SIGNED_AT, api_key="mnk_ada")
    parsed, signatures = parse_claim(signed_claim_body(claim, identity))
    keys = {NODE_ID: identity.public_key_raw}
    digest = hash_secret("mnk_ada")
    check_claim(parsed, signatures, keys, now=SIGNED_AT, api_key_sha256=digest)
    with pytest.raises(LinkRefused) as caught:
        check_claim(parsed, signatures, keys, now=SIGNED_AT, api_key_sha256=hash_secret("x"))
    assert caught.value.reason == "key-not-signed"


def test_the_account_fits_the_trackers_pattern_and_labels_its_bounds() -> None:
    assert re.match(ACCOUNT_PATTERN, account_for(NODE_ID))
    assert re.match(ACCOUNT_PATTERN, account_for("f" * 32))
    assert clean_label("  Ada\tLovelace\x00 ") == "Ada Lovelace"
    assert clean_label("x" * 100) == "x" * MAX_LABEL_LEN
    assert clean_label("") == "" and clean_label(" \n ") == ""
