"""Keys a worker has not cached: lookups of one event-loop turn share one store read."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tracker_service.routing_fixtures import add_nodes, node_row, register_recipe_of
from tests.tracker_service.store_backends import BACKENDS, fresh_database
from tracker_service.security import key_lookups
from tracker_service.security.key_lookups import MAX_GROUP, KeyLookups
from tracker_service.store.db import Database
from tracker_service.store.nodes import public_keys_of


@pytest.fixture(params=BACKENDS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    db = fresh_database(request.param, tmp_path, "tracker.db")
    yield db
    db.dispose()


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of every store read KeyLookups makes (the real read, counted)."""
    sizes: list[int] = []
    real = key_lookups._read_keys

    def counted(database: Database, node_ids: list[str]) -> dict[str, bytes]:
        sizes.append(len(node_ids))
        return real(database, node_ids)

    monkeypatch.setattr(key_lookups, "_read_keys", counted)
    return sizes


def stored_keys(database: Database, node_ids: list[str]) -> dict[str, bytes]:
    with database.engine.connect() as connection:
        return public_keys_of(connection, node_ids)


def test_lookups_in_one_turn_share_one_read(database: Database, reads: list[int]) -> None:
    register_recipe_of(database)
    ids = add_nodes(database, [node_row(0, 15) for _ in range(40)])
    expected = stored_keys(database, ids)
    unknown = "f" * 32
    lookups = KeyLookups(database)

    async def all_at_once() -> list[bytes | None]:
        # The same node twice, and one the store does not know.
        wanted = [*ids, ids[0], unknown]
        return await asyncio.gather(*(lookups.public_key(n) for n in wanted))

    found = asyncio.run(all_at_once())
    assert found == [expected[n] for n in ids] + [expected[ids[0]], None]
    assert len(expected) == 40 and all(len(key) == 32 for key in expected.values())
    assert reads == [41]  # 40 nodes and the unknown one, in one read


def test_a_large_burst_is_read_in_bounded_groups(database: Database, reads: list[int]) -> None:
    register_recipe_of(database)
    ids = add_nodes(database, [node_row(0, 15) for _ in range(MAX_GROUP + 20)])
    lookups = KeyLookups(database)

    async def burst() -> list[bytes | None]:
        return await asyncio.gather(*(lookups.public_key(n) for n in ids))

    found = asyncio.run(burst())
    assert found == [stored_keys(database, ids)[n] for n in ids]
    assert reads == [MAX_GROUP, 20]


def test_a_failed_read_fails_its_callers_and_the_next_read_works(
    database: Database, reads: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    register_recipe_of(database)
    [node_id] = add_nodes(database, [node_row(0, 15)])
    lookups = KeyLookups(database)
    counted = key_lookups._read_keys

    def broken(_database: Database, _node_ids: list[str]) -> dict[str, bytes]:
        raise RuntimeError("the store is gone")

    monkeypatch.setattr(key_lookups, "_read_keys", broken)
    with pytest.raises(RuntimeError, match="the store is gone"):
        asyncio.run(lookups.public_key(node_id))
    monkeypatch.setattr(key_lookups, "_read_keys", counted)
    assert asyncio.run(lookups.public_key(node_id)) == stored_keys(database, [node_id])[node_id]
    assert reads == [1]
