"""Is a tracker database whole? SQLite's own checks plus the ledger's invariants.

A tracker killed at any moment (``kill -9``, a lost VM) must come back to a
database where nothing is half-written. SQLite answers for its pages and
foreign keys (``PRAGMA integrity_check``, ``PRAGMA foreign_key_check``); the
tracker answers for what its transactions promise:

- the schema is at the newest migration (a start killed mid-migration rolls
  back whole, so it is never between two);
- a certified recipe has the complete, live evidence row it was certified by
  (route session, participants, one signed shard range per node, tokens), and
  that evidence still verifies under today's rules;
- a dark recipe has no live evidence (evidence and the status flip commit together);
- every evidence row belongs to a recipe, and every node to a known recipe, with
  a shard inside the model.

``meshnet-tracker check-db`` prints the verdict; the kill -9 test runs it after
every kill. Reading only: the check never migrates or repairs.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from alembic.script import ScriptDirectory
from sqlalchemy import Connection, inspect, select, text

from tracker_service.domain.recipe_identity import STATUS_CERTIFIED, STATUS_DARK
from tracker_service.store.db import MIGRATIONS_DIR, Database
from tracker_service.store.ledger import evidence_problem
from tracker_service.store.tables import (
    NODE_ACTIVE,
    NODE_BANNED,
    NODE_DEREGISTERED,
    NODE_QUARANTINED,
    NODE_REMOVED,
    CertificationEvidence,
    Node,
    Recipe,
)

log = logging.getLogger(__name__)

NODE_STATES = frozenset(
    {NODE_ACTIVE, NODE_DEREGISTERED, NODE_REMOVED, NODE_BANNED, NODE_QUARANTINED}
)
MAX_SQLITE_ROWS = 20  # integrity_check stops listing after this many problems


@dataclass
class IntegrityReport:
    """What the check found: the problems (empty when whole) and what it counted."""

    problems: list[str] = field(default_factory=list)
    recipes: int = 0
    certified: int = 0
    evidence: int = 0
    nodes: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        return (
            f"{self.recipes} recipes ({self.certified} certified), "
            f"{self.evidence} certification evidence rows, {self.nodes} nodes"
        )


def head_revision() -> str | None:
    """The newest migration this tracker ships."""
    script = ScriptDirectory(str(MIGRATIONS_DIR))
    return script.get_current_head()


def check_database(database: Database) -> IntegrityReport:
    """Run every check; never raises for a damaged database, only reports."""
    report = IntegrityReport()
    with database.engine.connect() as connection:
        if connection.dialect.name == "sqlite":
            report.problems += _sqlite_problems(connection)
        schema = _schema_problem(connection)
        connection.rollback()
    if schema is not None:
        report.problems.append(schema)
        return report  # the tables may be missing or old: nothing more is meaningful
    with database.session() as session:
        recipes = session.execute(select(Recipe)).scalars().all()
        evidence = session.execute(select(CertificationEvidence)).scalars().all()
        nodes = session.execute(select(Node)).scalars().all()
        report.recipes, report.evidence, report.nodes = len(recipes), len(evidence), len(nodes)
        report.certified = sum(1 for r in recipes if r.status == STATUS_CERTIFIED)
        report.problems += ledger_problems(recipes, evidence)
        report.problems += node_problems(nodes, recipes)
    return report


def _sqlite_problems(connection: Connection) -> list[str]:
    problems: list[str] = []
    rows = connection.exec_driver_sql(f"PRAGMA integrity_check({MAX_SQLITE_ROWS})").fetchall()
    verdicts = [str(r[0]) for r in rows]
    if verdicts != ["ok"]:
        problems += [f"SQLite integrity check: {v}" for v in verdicts]
    for table, rowid, parent, _fk in connection.exec_driver_sql("PRAGMA foreign_key_check"):
        problems.append(f"row {rowid} of {table} points at a missing row of {parent}")
    return problems


def _schema_problem(connection: Connection) -> str | None:
    if "alembic_version" not in inspect(connection).get_table_names():
        return "the database has no tracker schema (no alembic_version table)"
    found = [r[0] for r in connection.execute(text("SELECT version_num FROM alembic_version"))]
    head = head_revision()
    if found != [head]:
        return f"the schema is at migration {found or 'none'}, not at this tracker's {head}"
    return None


def _key(row: Recipe) -> tuple[str, str]:
    return row.model_artifact_digest, row.runtime_recipe_digest


def ledger_problems(
    recipes: Sequence[Recipe], evidence: Sequence[CertificationEvidence]
) -> list[str]:
    """The certification ledger's invariants over recipes and their evidence rows."""
    problems: list[str] = []
    by_pk = {r.id: r for r in recipes}
    rows_of: dict[int, list[CertificationEvidence]] = defaultdict(list)
    for row in evidence:
        recipe = by_pk.get(row.recipe_pk)
        if recipe is None:
            problems.append(f"evidence {row.id} belongs to no recipe (recipe id {row.recipe_pk})")
            continue
        rows_of[row.recipe_pk].append(row)
        problems += _evidence_problems(row, recipe)
    for recipe in recipes:
        problems += _recipe_problems(recipe, rows_of.get(recipe.id, []))
    return problems


def _evidence_problems(row: CertificationEvidence, recipe: Recipe) -> list[str]:
    where = f"evidence {row.id} of recipe {recipe.recipe_id}"
    problems: list[str] = []
    node_ids: Any = row.node_ids
    ranges: Any = row.shard_ranges
    participants: Any = row.participants
    if not row.route_session_id:
        problems.append(f"{where} names no route session")
    if not isinstance(node_ids, list) or not node_ids:
        problems.append(f"{where} names no node")
    elif not isinstance(ranges, list) or len(ranges) != len(node_ids):
        problems.append(f"{where} has {_count(ranges)} shard ranges for {len(node_ids)} nodes")
    elif not isinstance(participants, list) or len(participants) != len(node_ids):
        problems.append(
            f"{where} has {_count(participants)} participant identities for {len(node_ids)} nodes"
        )
    if row.layer_count != recipe.layer_count:
        problems.append(
            f"{where} covers {row.layer_count} layers; the recipe has {recipe.layer_count}"
        )
    if row.revoked_at is not None:
        if not row.revoked_reason:
            problems.append(f"{where} is revoked without a reason")
        return problems
    if not problems:
        why = evidence_problem(row, _key(recipe))
        if why is not None:
            problems.append(f"{where} no longer verifies: {why}")
    return problems


def _count(value: Any) -> int:
    return len(value) if isinstance(value, list) else 0


def _recipe_problems(recipe: Recipe, rows: list[CertificationEvidence]) -> list[str]:
    where = f"recipe {recipe.recipe_id} {recipe.runtime_recipe_digest[:12]}"
    live = [r for r in rows if r.revoked_at is None]
    if recipe.revoked_at is not None and recipe.status != STATUS_DARK:
        return [f"{where} is revoked by the operator but {recipe.status}"]
    if recipe.status == STATUS_DARK:
        if live:
            ids = ", ".join(str(r.id) for r in live)
            return [f"{where} is dark but its evidence {ids} is live (a half-finished promotion)"]
        if recipe.certified_at is not None or recipe.certified_route_session is not None:
            return [f"{where} is dark but still records a certification"]
        return []
    if recipe.status != STATUS_CERTIFIED:
        return [f"{where} has the unknown status {recipe.status!r}"]
    if recipe.certified_at is None or recipe.certified_node_count is None:
        return [f"{where} is certified without a time or a node count"]
    proof = [r for r in live if r.route_session_id == recipe.certified_route_session]
    if not proof:
        return [
            f"{where} is certified by route session {recipe.certified_route_session} but no "
            "live evidence row records it"
        ]
    nodes = len(set(proof[-1].node_ids or []))
    if nodes != recipe.certified_node_count:
        return [
            f"{where} says {recipe.certified_node_count} nodes certified it; its evidence "
            f"names {nodes}"
        ]
    return []


def node_problems(nodes: Sequence[Node], recipes: Sequence[Recipe]) -> list[str]:
    """Every node serves a known recipe, inside the model, in a known state."""
    problems: list[str] = []
    layers = {_key(r): r.layer_count for r in recipes}
    for node in nodes:
        key = (node.model_artifact_digest, node.runtime_recipe_digest)
        if key not in layers:
            problems.append(f"node {node.node_id} serves a recipe the ledger does not know")
        elif not 0 <= node.shard_start < node.shard_end <= layers[key]:
            problems.append(
                f"node {node.node_id} serves layers {node.shard_start}-{node.shard_end} of a "
                f"{layers[key]}-layer model"
            )
        if node.state not in NODE_STATES:
            problems.append(f"node {node.node_id} has the unknown state {node.state!r}")
    return problems
