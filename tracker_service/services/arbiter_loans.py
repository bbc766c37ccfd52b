"""Arbiter loans: with no fit arbiter, an established node loads the disputed range.

A dispute waits for an arbiter that is established and tied to neither party
(hop_audit.Judges). On the smallest network (two nodes on a range, one lying, one
node on the other range) no such node holds the range, and a newcomer may never
come. So the arbitration loop *borrows* one: an established node of the model,
independent of both parties, whose shard is at least as long as the disputed
range (it has the room), is asked through the rebalancing board to serve exactly
that range (an urgent move, which the node makes as any move: reload, prove,
register). Once there it is fit to arbitrate (re-registering restarts its age, so
the loan itself vouches for it), and once the dispute is settled it is asked back
to its own range; the loan ends when it is there.

In memory, per tracker process, as the disputes are.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass

from sqlalchemy import select

from tracker_service.domain.allocation import Move
from tracker_service.services.disputes import Dispute, DisputeBoard
from tracker_service.services.rebalancing import RebalanceBoard
from tracker_service.store.db import Database
from tracker_service.store.independence import independent_of_all, standings
from tracker_service.store.route_candidates import route_candidates
from tracker_service.store.tables import Node

log = logging.getLogger(__name__)

# A lent node that has not arbitrated by then (it may be pinned with --layers, or
# busy) is let go, and another is asked.
LOAN_TTL_S = 600.0


@dataclass(frozen=True)
class Loan:
    node_id: str
    dispute_id: str
    home: tuple[int, int]  # the range it goes back to
    target: tuple[int, int]  # the disputed range it was asked to load
    until: float  # asked elsewhere after this, if the dispute still waits


class ArbiterLoans:
    def __init__(
        self,
        database: Database,
        board: RebalanceBoard,
        disputes: DisputeBoard,
        *,
        min_audits: int,
        min_age_s: float,
        rng: random.Random | None = None,
    ) -> None:
        self._db = database
        self._board = board
        self._disputes = disputes
        self._min_audits = min_audits
        self._min_age_s = min_age_s
        self._rng = rng or random.Random()
        self.loans: dict[str, Loan] = {}

    def lent(self) -> frozenset[str]:
        return frozenset(self.loans)

    def borrow(self, dispute: Dispute) -> Loan | None:
        """Blocking: ask one fit node to load the disputed range (one loan per dispute)."""
        now = time.time()
        for loan in [x for x in self.loans.values() if x.dispute_id == dispute.dispute_id]:
            if loan.until >= now:
                return None  # on its way
            log.warning("arbitration: node %s did not come to arbitrate", loan.node_id[:8])
            dispute.tried.add(loan.node_id)
            self._board.end_loan(loan.node_id)
            del self.loans[loan.node_id]
        length = dispute.end - dispute.start
        busy = self._disputes.withdrawn() | set(dispute.nodes) | set(self.loans) | dispute.tried
        with self._db.session() as session:
            found = [
                c
                for c in route_candidates(session, dispute.fingerprint, now=now)
                if c.node_id not in busy and c.end - c.start >= length
            ]
            standing = standings(session, [*dispute.nodes, *(c.node_id for c in found)])
        parties = [standing.get(n) for n in dispute.nodes]
        fit = [
            c
            for c in found
            if (mine := standing.get(c.node_id)) is not None
            and mine.established(min_audits=self._min_audits, min_age_s=self._min_age_s, now=now)
            and independent_of_all(mine, parties)
        ]
        if not fit:
            return None
        node = self._rng.choice(fit)
        target = (dispute.start, dispute.end)
        loan = Loan(
            node.node_id, dispute.dispute_id, (node.start, node.end), target, now + LOAN_TTL_S
        )
        self._board.lend(
            Move(
                node.node_id,
                dispute.start,
                dispute.end,
                f"the tracker asks this node to serve layers {dispute.start}-{dispute.end} for "
                "a while: two nodes disagree there and it is the independent node to decide; "
                f"it is asked back to layers {node.start}-{node.end} afterwards",
                0.0,
                0.0,
                urgent=True,
            )
        )
        self.loans[node.node_id] = loan
        log.warning(
            "arbitration: no fit arbiter for layers %d-%d; node %s is asked to load them",
            dispute.start,
            dispute.end,
            node.node_id[:8],
        )
        return loan

    def settle(self) -> None:
        """Blocking: a loan whose dispute is settled sends its node home, then ends."""
        open_ids = {d.dispute_id for d in self._disputes.open()}
        done = [loan for loan in self.loans.values() if loan.dispute_id not in open_ids]
        if not done:
            return
        with self._db.session() as session:
            ranges = {
                row.node_id: (row.shard_start, row.shard_end)
                for row in session.execute(
                    select(Node.node_id, Node.shard_start, Node.shard_end).where(
                        Node.node_id.in_([loan.node_id for loan in done])
                    )
                )
            }
        for loan in done:
            if ranges.get(loan.node_id) == loan.home or loan.node_id not in ranges:
                self._board.end_loan(loan.node_id)
                del self.loans[loan.node_id]
                continue
            start, end = loan.home
            self._board.lend(
                Move(
                    loan.node_id,
                    start,
                    end,
                    f"the dispute this node was asked to decide is settled; the tracker asks "
                    f"it back to layers {start}-{end}",
                    0.0,
                    0.0,
                    urgent=True,
                )
            )
