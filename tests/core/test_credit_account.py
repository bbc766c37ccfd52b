"""The account statement the app signs (core/credit_account.py), byte for byte, and the
tracker's own check of it (tracker_service/domain/credit_rules.py) accepting it."""

from __future__ import annotations

import re

from core.credit_account import (
    MAX_LABEL_LEN,
    account_for,
    clean_label,
    signed_claim_body,
    this_computer_claim,
)
from core.identity import NodeIdentity, verify
from tracker_service.domain.credit_rules import ACCOUNT_PATTERN, check_claim, parse_claim

SEED = bytes(range(32))
NODE_ID = "56475aa75463474c0285df5dbf2bcab7"
SIGNED_AT = 1796200000
EXPECTED = (
    b"meshnet.credit-account.v1\n"
    b'{"account":"pc-56475aa75463474c0285df5dbf2bcab7","display_name":"Zo\xc3\xab Lovelace",'
    b'"node_ids":["56475aa75463474c0285df5dbf2bcab7"],"signed_at":1796200000,'
    b'"team":"analytical"}'
)
# Ed25519 is deterministic: this seed signs EXPECTED so, on every machine.
EXPECTED_SIGNATURE = (
    "Kxoi9lzwKgofu2mhPXjLDEMkvvLl6aOSTtoIrtwEfwdfxpMcOzpjnI55BfYceAslM5nYHZJofovmSURoUxcBAA=="
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
        "signatures": {NODE_ID: EXPECTED_SIGNATURE},
    }
    assert verify(identity.public_key_raw, EXPECTED, EXPECTED_SIGNATURE)


def test_the_trackers_own_check_accepts_the_signed_body() -> None:
    identity = NodeIdentity.from_seed(SEED)
    body = signed_claim_body(this_computer_claim(identity, "Ada", "", now=SIGNED_AT), identity)
    claim, signatures = parse_claim(body)
    check_claim(claim, signatures, {NODE_ID: identity.public_key_raw}, now=SIGNED_AT + 5)
    assert claim.account == f"pc-{NODE_ID}" and claim.node_ids == (NODE_ID,)


def test_the_account_fits_the_trackers_pattern_and_labels_its_bounds() -> None:
    assert re.match(ACCOUNT_PATTERN, account_for(NODE_ID))
    assert re.match(ACCOUNT_PATTERN, account_for("f" * 32))
    assert clean_label("  Ada\tLovelace\x00 ") == "Ada Lovelace"
    assert clean_label("x" * 100) == "x" * MAX_LABEL_LEN
    assert clean_label("") == "" and clean_label(" \n ") == ""
