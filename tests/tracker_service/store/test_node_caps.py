"""The per-address node cap counts an indexed host column, filled at registration
and backfilled by migration 0008, on SQLite and PostgreSQL."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import event, text

from tests.tracker_service.helpers import FakeNode, identity_block
from tests.tracker_service.store_backends import BACKENDS, fresh_database
from tracker_service.domain.recipe_identity import parse_identity
from tracker_service.store.db import MIGRATIONS_DIR, Database
from tracker_service.store.node_caps import cap_host, live_nodes_at_host
from tracker_service.store.nodes import Liveness, end_registration, register_node
from tracker_service.store.tables import Node

LIVENESS = Liveness(live_window_s=30.0, session_ttl_s=900.0)
IDENTITY = parse_identity(identity_block())
HOME = "203.0.113.7"


@pytest.fixture(params=BACKENDS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    db = fresh_database(request.param, tmp_path, "caps.db")
    yield db
    db.dispose()


def _register(db: Database, endpoint: str, relayed_from: str = "", now: float = 0.0) -> str:
    node = FakeNode(endpoint=endpoint)
    with db.sessions.begin() as session:
        register_node(
            session,
            node_id=node.node_id,
            public_key=node.public_raw,
            endpoint=endpoint,
            identity=IDENTITY,
            capability={"passed": True},
            throughput=1.0,
            now=now or time.time(),
            liveness=LIVENESS,
            relayed_from=relayed_from,
        )
    return node.node_id


def _count(db: Database, host: str, now: float, other_than: str = "") -> int:
    with db.session() as session:
        return live_nodes_at_host(session, host, now=now, other_than=other_than)


def _migrate(db: Database, revision: str, *, down: bool = False) -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    with db.engine.begin() as connection:
        config.attributes["connection"] = connection
        (command.downgrade if down else command.upgrade)(config, revision)


@pytest.mark.parametrize(
    ("endpoint", "relayed_from", "host"),
    [
        ("ws://Node.Example:7000", "", "node.example"),
        # An IPv6 address counts as its /64 (tracker_service/domain/address_groups.py).
        ("wss://[2001:DB8::1]:443", "", "2001:db8::/64"),
        ("ws://relay.example:8765/relay/" + "ab" * 16, "2001:DB8::7", "2001:db8::/64"),
        ("ws://relay.example:8765/relay/" + "ab" * 16, HOME, HOME),
        ("ws://[::1:7000", "", ""),  # not a URL: counted nowhere (policy refuses it)
    ],
)
def test_a_node_is_counted_by_its_own_address(endpoint: str, relayed_from: str, host: str) -> None:
    assert cap_host(endpoint, relayed_from) == host


def test_registration_stores_the_host_and_the_cap_counts_live_active_nodes_there(
    database: Database,
) -> None:
    now = time.time()
    direct = _register(database, f"ws://{HOME}:7000", now=now)
    relayed = _register(database, "ws://relay.example:1/relay/" + "cd" * 16, HOME, now=now)
    stopped = _register(database, f"ws://{HOME}:7001", now=now)
    _register(database, "ws://Other.Example:7000", now=now)
    with database.sessions.begin() as session:
        end_registration(session, stopped, "deregistered", "stopped")
        hosts = {n.node_id: n.cap_host for n in session.query(Node)}
    assert hosts[direct] == HOME and hosts[relayed] == HOME
    assert _count(database, HOME, now) == 2  # the stopped one is not counted
    assert _count(database, HOME, now, other_than=direct) == 1  # not against itself
    assert _count(database, "OTHER.example", now) == 1
    assert _count(database, "relay.example", now) == 0  # the relay's host is no one's
    assert _count(database, HOME, now + LIVENESS.live_window_s + 1) == 0  # gone quiet


def test_migration_0008_backfills_the_host_of_nodes_registered_before_it(
    database: Database,
) -> None:
    now = time.time()
    direct = _register(database, "ws://Node.Example:7000", now=now)
    relayed = _register(database, "ws://relay.example:1/relay/" + "ef" * 16, HOME, now=now)
    _migrate(database, "0007", down=True)  # the nodes as 0007 left them: no host column
    with database.engine.connect() as connection:
        columns = connection.execute(text("SELECT * FROM nodes")).keys()
    assert "cap_host" not in columns
    _migrate(database, "head")
    with database.session() as session:
        hosts = {n.node_id: n.cap_host for n in session.query(Node)}
    assert hosts == {direct: "node.example", relayed: HOME}
    assert _count(database, "node.example", now) == 1 and _count(database, HOME, now) == 1


def test_the_cap_count_is_answered_from_the_host_index(database: Database) -> None:
    now = time.time()
    for port in range(7000, 7020):
        _register(database, f"ws://n{port}.example:{port}", now=now)
    sent: list[tuple[str, Any]] = []

    def keep(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        sent.append((statement, parameters))

    event.listen(database.engine, "before_cursor_execute", keep)
    try:
        assert _count(database, "n7003.example", now) == 1
    finally:
        event.remove(database.engine, "before_cursor_execute", keep)
    [(statement, parameters)] = [s for s in sent if "count(" in s[0].lower()]
    with database.engine.connect() as connection:
        if connection.dialect.name == "sqlite":
            rows = connection.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)
            plan = " ".join(str(r[-1]) for r in rows)
        else:
            connection.exec_driver_sql("SET enable_seqscan = off")  # 20 rows: make it choose
            rows = connection.exec_driver_sql("EXPLAIN " + statement, parameters)
            plan = " ".join(str(r[0]) for r in rows)
    assert "ix_nodes_cap_host" in plan, plan
