from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.tracker_service.helpers import CONTENT, identity_block
from tests.tracker_service.identity_cases import OTHER_HEX, REJECTIONS, Mutation
from tracker_service.domain import recipe_identity as ri
from tracker_service.domain.recipe_identity import (
    CertificationLedger,
    DistributedForwardEvidence,
    FingerprintMismatch,
    PresentedIdentity,
    RecipeIdentityError,
    coverage_gap,
    parse_identity,
)

VECTORS = Path(__file__).resolve().parents[2] / "data" / "recipe_fingerprint_vectors.json"


def _vectors() -> dict[str, Any]:
    if not VECTORS.exists():
        pytest.fail(f"{VECTORS} is missing; rebuild it: python -m tests.core.build_vectors")
    data: dict[str, Any] = json.loads(VECTORS.read_text(encoding="utf-8"))
    return data


def test_domains_match_the_committed_vectors() -> None:
    domains = _vectors()["domains"]
    assert domains == {
        "artifact": ri.ARTIFACT_DIGEST_DOMAIN,
        "recipe": ri.RECIPE_DIGEST_DOMAIN,
        "shard_binding": ri.SHARD_BINDING_DIGEST_DOMAIN,
    }


def test_every_committed_vector_re_derives_to_the_same_digests() -> None:
    vectors = _vectors()["vectors"]
    assert vectors, "the vector file holds no vectors"
    for vector in vectors:
        identity = parse_identity(vector["identity"])
        derived = {
            "model_artifact_digest": identity.model_artifact_digest,
            "runtime_recipe_digest": identity.runtime_recipe_digest,
            "shard_binding_digest": identity.shard_binding_digest,
        }
        assert derived == vector["expected"], vector["name"]


def test_every_committed_rejection_is_refused_with_its_error() -> None:
    rejections = _vectors()["rejections"]
    assert rejections, "the vector file holds no rejections"
    for vector in rejections:
        expected = (
            FingerprintMismatch if vector["error"] == "FingerprintMismatch" else RecipeIdentityError
        )
        with pytest.raises(expected):
            parse_identity(vector["identity"])
        if expected is RecipeIdentityError:
            # A plain identity error must not be mis-reported as a fingerprint mismatch.
            try:
                parse_identity(vector["identity"])
            except FingerprintMismatch:  # pragma: no cover - the assertion below fails
                pytest.fail(f"{vector['name']}: raised FingerprintMismatch, expected a plain error")
            except RecipeIdentityError:
                pass


@pytest.mark.parametrize(
    ("mutate", "error", "fragment"),
    [pytest.param(m, e, f, id=name) for name, m, e, f in REJECTIONS],
)
def test_parse_identity_refuses(mutate: Mutation, error: type[Exception], fragment: str) -> None:
    block = identity_block()
    mutate(block)
    with pytest.raises(error, match=None) as caught:
        parse_identity(block)
    assert fragment in str(caught.value)


def test_digests_are_re_derived_from_axes_and_a_correct_claim_is_accepted() -> None:
    plain = parse_identity(identity_block())
    claimed = identity_block()
    claimed["fingerprint"] = {
        "model_artifact_digest": plain.model_artifact_digest,
        "runtime_recipe_digest": plain.runtime_recipe_digest,
    }
    assert parse_identity(claimed).key == plain.key
    changed = parse_identity(identity_block(compute_dtype="bfloat16"))
    assert changed.model_artifact_digest == plain.model_artifact_digest
    assert changed.runtime_recipe_digest != plain.runtime_recipe_digest


def test_digest_formula_is_domain_separated_canonical_sha256() -> None:
    identity = parse_identity(identity_block())
    expected = ri.canonical_sha256(
        {
            "domain": "meshnet.model-artifact.v1",
            "body": {
                "source_digest": CONTENT,
                "architecture": identity.architecture,
                "architecture_digest": identity.architecture_digest,
                "layer_count": 30,
            },
        }
    )
    assert identity.model_artifact_digest == expected


def test_fingerprint_ignores_range_but_shard_binding_pins_it() -> None:
    first = parse_identity(identity_block(0, 15))
    second = parse_identity(identity_block(15, 30))
    assert first.key == second.key
    assert first.shard_binding_digest != second.shard_binding_digest


def test_a_split_artifact_inherits_the_source_fingerprint_but_not_its_binding() -> None:
    whole = parse_identity(identity_block(0, 15))
    block = identity_block(0, 15)
    block["artifact"]["content_digest"] = OTHER_HEX
    block["artifact"]["derived_from"] = {
        "source_artifact_digest": CONTENT,
        "shard_start": 0,
        "shard_end": 15,
    }
    split = parse_identity(block)
    assert split.is_derivative and split.source_digest == CONTENT
    assert split.key == whole.key
    assert split.shard_binding_digest != whole.shard_binding_digest


def test_identity_block_round_trips_through_parse() -> None:
    identity = parse_identity(identity_block(3, 17))
    again = parse_identity(identity.identity_block())
    assert again == identity
    assert again.shard_binding_digest == identity.shard_binding_digest


@pytest.mark.parametrize(
    ("ranges", "gap"),
    [
        ([(0, 15), (15, 30)], None),
        ([(0, 20), (10, 30)], None),
        ([], "the route owns no layers"),
        ([(2, 30)], "layers 0–2 are owned by no Shard on the route"),
        ([(0, 10), (12, 30)], "layers 10–12 are owned by no Shard on the route"),
        ([(0, 29)], "layers 29–30 are owned by no Shard on the route"),
        ([(0, 31)], "the route claims 31 layers, but the model has only 30"),
    ],
)
def test_coverage_gap_names_holes_and_allows_overlaps(
    ranges: list[tuple[int, int]], gap: str | None
) -> None:
    assert coverage_gap(ranges, 30) == gap


def _evidence(**overrides: Any) -> DistributedForwardEvidence:
    first = parse_identity(identity_block(0, 15))
    second = parse_identity(identity_block(15, 30))
    values: dict[str, Any] = {
        "route_session_id": "rs-1",
        "route_epoch": 1,
        "node_ids": ("a" * 32, "b" * 32),
        "shard_ranges": ((0, 15), (15, 30)),
        "tokens_generated": 8,
        "layer_count": 30,
        "fingerprint": first.key,
        "participants": (first, second),
    }
    values.update(overrides)
    return DistributedForwardEvidence(**values)


def _other_recipe_participant() -> PresentedIdentity:
    return parse_identity(identity_block(15, 30, kv_dtype="float16"))


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        ({"synthetic": True}, "synthetic worker"),
        ({"node_ids": ("a" * 32,)}, "certifying node list"),
        ({"shard_ranges": ((0, 30),)}, "recorded effective ranges"),
        ({"shard_ranges": ((0, 15), (14, 30))}, "its recorded effective range"),
        ({"node_ids": ("a" * 32, "a" * 32)}, "1 distinct node(s)"),
        ({"tokens_generated": 0}, "generated no tokens"),
    ],
)
def test_evidence_rejection_names_why(overrides: dict[str, Any], fragment: str) -> None:
    rejection = _evidence(**overrides).rejection()
    assert rejection is not None and fragment in rejection


def test_evidence_with_a_foreign_participant_is_rejected() -> None:
    evidence = _evidence()
    participants = (evidence.participants[0], _other_recipe_participant())
    rejection = replace(evidence, participants=participants).rejection()
    assert rejection == "a participant fingerprint differs from the certifying route"


def test_evidence_with_a_hole_is_rejected_by_coverage() -> None:
    first = parse_identity(identity_block(0, 10))
    second = parse_identity(identity_block(15, 30))
    evidence = _evidence(participants=(first, second), shard_ranges=((0, 10), (15, 30)))
    assert evidence.rejection() == "layers 10–15 are owned by no Shard on the route"


def test_evidence_with_the_same_node_three_times_is_rejected() -> None:
    parts = tuple(parse_identity(identity_block(a, b)) for a, b in ((0, 10), (10, 20), (20, 30)))
    evidence = _evidence(
        node_ids=("a" * 32, "b" * 32, "a" * 32),
        participants=parts,
        shard_ranges=((0, 10), (10, 20), (20, 30)),
    )
    assert evidence.rejection() == "the same node is counted more than once in the certifying route"


def test_good_evidence_has_no_rejection() -> None:
    assert _evidence().rejection() is None


def test_ledger_keeps_unknown_dark_and_certified_apart() -> None:
    ledger = CertificationLedger()
    identity = parse_identity(identity_block(0, 15))
    assert ledger.status(identity).status == ri.STATUS_UNKNOWN
    with pytest.raises(RecipeIdentityError, match="unknown recipes cannot be certified"):
        ledger.certify(identity, _evidence())
    dark = ledger.register(identity)
    assert (dark.status, dark.may_serve, dark.may_certify) == ("dark", False, True)
    certified = ledger.certify(identity, _evidence())
    assert certified.may_serve and certified.detail.endswith("across 2 nodes")
    assert ledger.register(identity) == certified
    assert ledger.to_dict()["dark"] == []
    assert list(ledger.to_dict()["certified"]) == ["/".join(identity.key)]


@pytest.mark.parametrize(
    ("evidence_overrides", "fragment"),
    [
        ({"fingerprint": (OTHER_HEX, OTHER_HEX)}, "fingerprint does not match"),
        ({"layer_count": 31}, "layer count does not match"),
        ({"tokens_generated": 0}, "does not certify: the certifying forward generated no tokens"),
    ],
)
def test_ledger_refuses_short_evidence_and_stays_dark(
    evidence_overrides: dict[str, Any], fragment: str
) -> None:
    ledger = CertificationLedger()
    identity = parse_identity(identity_block(0, 15))
    ledger.register(identity)
    with pytest.raises(RecipeIdentityError) as caught:
        ledger.certify(identity, _evidence(**evidence_overrides))
    assert fragment in str(caught.value)
    assert ledger.status(identity).status == "dark"


def test_rejection_cases_leave_the_base_block_valid() -> None:
    # Guard for the table: the unmutated block parses, so each case fails on its mutation.
    block = identity_block()
    assert parse_identity(copy.deepcopy(block)).layer_count == 30
