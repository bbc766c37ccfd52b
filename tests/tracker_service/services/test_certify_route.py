"""The certify route whose hops stop inside their shards (services/certify_route.py)."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tracker_service.domain.keys import TrackerKey
from tracker_service.domain.route_formation import Candidate
from tracker_service.errors import NoRoute
from tracker_service.services.certify_route import early_ended_plan

FINGERPRINT = ("a" * 64, "b" * 64)


def _candidate(name: str, start: int, end: int) -> Candidate:
    return Candidate(name * 32, f"wss://{name}.example:1", b"k" * 32, start, end, 1.0)


def test_two_whole_model_nodes_get_a_ticket_stopping_the_first_inside_its_shard() -> None:
    key = TrackerKey(Ed25519PrivateKey.generate())
    plan = early_ended_plan(
        30, [_candidate("a", 0, 30), _candidate("b", 0, 30)], FINGERPRINT, key, ttl_s=60.0
    )
    assert [(h.node_id[0], h.start, h.effective_start, h.end) for h in plan.hops] == [
        ("a", 0, 0, 1),
        ("b", 0, 1, 30),
    ]
    hops = plan.signed_ticket["ticket"]["hops"]
    assert hops[0]["end"] == 30 and hops[0]["effective_end"] == 1  # the shard, and the stop
    assert "effective_end" not in hops[1]  # the last runs to its shard's end
    assert all("next" not in h for h in hops)  # a star: the certifier carries each output
    assert not plan.chain_offered


def test_no_early_ended_route_without_two_distinct_nodes() -> None:
    key = TrackerKey(Ed25519PrivateKey.generate())
    with pytest.raises(NoRoute, match="2 or more distinct nodes"):
        early_ended_plan(30, [_candidate("a", 0, 30)], FINGERPRINT, key, ttl_s=60.0)
    both = [_candidate("a", 0, 30), _candidate("b", 0, 30)]
    with pytest.raises(NoRoute):
        early_ended_plan(30, both, FINGERPRINT, key, ttl_s=60.0, exclude=["b" * 32])
