"""Who judges a hop: the nodes that could replay it, and which of them may decide.

Issue 35, attack 6: auditors and arbiters were any live node with the range, the
first in database order, so a liar's fresh sybil could decide a dispute. Now the
tracker draws them at random among the nodes whose layers contain the hop, and
judges their fitness by :mod:`tracker_service.store.independence`: a second opinion
is independent of the audited node (established nodes first); a third opinion or
an arbiter, whose word convicts, is established and independent of both parties.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tracker_service.domain.route_formation import Candidate
from tracker_service.store.db import Database
from tracker_service.store.independence import Standing, independent_of_all, standings
from tracker_service.store.route_candidates import route_candidates


@dataclass
class Judges:
    """The nodes that could replay one hop, and what makes each fit to judge it."""

    able: list[Candidate]  # contain the hop, off its route, in no dispute; shuffled
    standing: dict[str, Standing]
    established: frozenset[str]

    def _independent(self, node_id: str, parties: Sequence[str]) -> bool:
        mine = self.standing.get(node_id)
        if mine is None:
            return False
        return independent_of_all(mine, [self.standing.get(p) for p in parties])

    def seconds(self, audited: str) -> list[Candidate]:
        """Second opinions: independent of the audited node, established ones first
        (a young network, with none able, starts with its newcomers)."""
        fit = [c for c in self.able if self._independent(c.node_id, [audited])]
        return sorted(fit, key=lambda c: c.node_id not in self.established)

    def deciders(
        self, parties: Sequence[str], also: frozenset[str] = frozenset()
    ) -> list[Candidate]:
        """Whose word convicts: established (or lent by arbitration, ``also``: the loan
        chose it established, and its move restarted its age), independent of every
        party."""
        return [
            c
            for c in self.able
            if (c.node_id in self.established or c.node_id in also)
            and self._independent(c.node_id, parties)
        ]


def find_judges(
    database: Database,
    fingerprint: tuple[str, str],
    layers: tuple[int, int],
    leave_out: Iterable[str],
    parties: Sequence[str],
    *,
    min_audits: int,
    min_age_s: float,
    rng: random.Random,
) -> Judges:
    """Blocking: the live nodes whose layers contain ``layers``, shuffled, none in
    ``leave_out``, with the standing of each and of the parties."""
    start, end = layers
    skip = set(leave_out)
    now = time.time()
    with database.session() as session:
        found = route_candidates(session, fingerprint, now=now)
        able = [c for c in found if c.node_id not in skip and c.start <= start and end <= c.end]
        standing = standings(session, [*parties, *(c.node_id for c in able)])
    rng.shuffle(able)
    established = frozenset(
        node_id
        for node_id, s in standing.items()
        if s.established(min_audits=min_audits, min_age_s=min_age_s, now=now)
    )
    return Judges(able, standing, established)
