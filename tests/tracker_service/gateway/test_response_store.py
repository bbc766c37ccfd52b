"""previous_response_id's store: per key, bounded, with a TTL (gateway/faces/response_store.py)."""

from __future__ import annotations

import pytest

from tracker_service.errors import BadRequest
from tracker_service.gateway.faces.response_store import ResponseStore

TURN = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_stored_conversation_comes_back_to_its_own_key_only() -> None:
    store = ResponseStore(ttl_s=60, per_key=4)
    store.put(1, "resp_a", TURN)
    assert store.conversation(1, "resp_a") == TURN
    with pytest.raises(BadRequest) as caught:
        store.conversation(2, "resp_a")  # another key is told it does not exist
    assert caught.value.param == "previous_response_id"
    assert caught.value.code == "previous_response_not_found"


def test_entries_expire_after_the_ttl() -> None:
    clock = Clock()
    store = ResponseStore(ttl_s=60, per_key=4, clock=clock)
    store.put(None, "resp_a", TURN)
    clock.now += 59
    assert store.conversation(None, "resp_a") == TURN
    clock.now += 2
    with pytest.raises(BadRequest, match="60 s"):
        store.conversation(None, "resp_a")
    store.put(None, "resp_b", TURN)
    assert len(store) == 1  # the expired one was dropped when the key was next used


def test_each_key_keeps_at_most_per_key_and_the_oldest_go_first() -> None:
    store = ResponseStore(ttl_s=60, per_key=2, max_keys=2)
    for name in ("a", "b", "c"):
        store.put(1, f"resp_{name}", TURN)
    with pytest.raises(BadRequest):
        store.conversation(1, "resp_a")
    assert store.conversation(1, "resp_c") == TURN
    store.put(2, "resp_x", TURN)
    store.put(3, "resp_y", TURN)  # a third key: the least recently used key goes
    with pytest.raises(BadRequest):
        store.conversation(1, "resp_c")
    assert len(store) == 2


def test_a_stored_conversation_is_a_copy() -> None:
    store = ResponseStore(ttl_s=60, per_key=2)
    store.put(1, "resp_a", TURN)
    got = store.conversation(1, "resp_a")
    got[0]["content"] = "changed"
    assert store.conversation(1, "resp_a") == TURN
