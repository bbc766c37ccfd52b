"""Arbitration: a third node replays a disputed hop, and the minority is quarantined.

:mod:`tracker_service.services.disputes` keeps the disagreements no third node could
decide; allocation recruits a node for the disputed range. This loop looks
for a live node of the dispute's fingerprint that can replay the hop (its
layers contain the hop's), is in no dispute, is established and shares no
account, network prefix or invite with either party (hop_audit.Judges: an
arbiter's word convicts, so a party's spare identities never decide), picked at
random, replays the recorded inputs on it, and compares
its answer with both disputed answers. The one it agrees with is the
majority; the other is quarantined with the evidence, including its own
signed receipt bound to the disputed output, as a three-node audit does. An
arbiter that agrees with neither (or both) decides nothing; the next one is
tried. With no fit arbiter holding the range, one is borrowed
(:mod:`tracker_service.services.arbiter_loans`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from tracker_service.domain.route_formation import Candidate
from tracker_service.services.arbiter_loans import ArbiterLoans
from tracker_service.services.audit_opinions import Opinion, input_sha256, output_digest
from tracker_service.services.background import BackgroundLoop
from tracker_service.services.disputes import Dispute, DisputeBoard
from tracker_service.services.hop_audit import Auditor
from tracker_service.store.db import Database

log = logging.getLogger(__name__)

DEFAULT_POLL_S = 2.0


class Arbitration(BackgroundLoop):
    task_name = "meshnet-arbitration"

    def __init__(
        self,
        database: Database,
        auditor: Auditor,
        board: DisputeBoard,
        *,
        poll_s: float = DEFAULT_POLL_S,
        loans: ArbiterLoans | None = None,
    ) -> None:
        super().__init__(poll_s)
        self._db = database
        self._auditor = auditor
        self._board = board
        self.loans = loans

    async def run_pass(self) -> list[str]:
        """Try every open dispute once; returns the nodes quarantined."""
        convicted: list[str] = []
        for dispute in self._board.open():
            liar = await self.arbitrate(dispute)
            if liar is not None:
                convicted.append(liar)
            elif self.loans is not None:  # no fit arbiter holds the range: borrow one
                await asyncio.to_thread(self.loans.borrow, dispute)
        if self.loans is not None:
            await asyncio.to_thread(self.loans.settle)
        return convicted

    def _arbiters(self, dispute: Dispute) -> list[Candidate]:
        judges = self._auditor.judges(
            dispute.fingerprint, dispute.start, dispute.end, set(dispute.tried), *dispute.nodes
        )
        lent = self.loans.lent() if self.loans is not None else frozenset()
        return judges.deciders(list(dispute.nodes), also=lent)

    async def arbitrate(self, dispute: Dispute) -> str | None:
        """Replay on the first able arbiter; the quarantined node, or None (undecided)."""
        for arbiter in await asyncio.to_thread(self._arbiters, dispute):
            reply, receipt = await self._auditor.replay(
                dispute.fingerprint,
                dispute.layer_count,
                dispute.start,
                arbiter,
                dispute.frames,
                dispute.last_hop,
                end=dispute.end,
            )
            if not reply:
                continue  # it could not answer now: asked again next pass
            first, second = dispute.nodes
            agrees = {
                node: self._auditor.compare(
                    dispute.replies[node], reply, dispute.last_hop, dispute.tolerance
                )
                for node in (first, second)
            }
            if agrees[first].agree == agrees[second].agree:
                log.warning(
                    "arbitration: %s agrees with %s of %s and %s on layers %d-%d; it decides "
                    "nothing, another arbiter is needed",
                    arbiter.node_id[:8],
                    "both" if agrees[first].agree else "neither",
                    first[:8],
                    second[:8],
                    dispute.start,
                    dispute.end,
                )
                dispute.tried.add(arbiter.node_id)
                continue
            liar, honest = (second, first) if agrees[first].agree else (first, second)
            await self._convict(dispute, liar, honest, arbiter, reply, receipt)
            return liar
        return None

    async def _convict(
        self,
        dispute: Dispute,
        liar: str,
        honest: str,
        arbiter: Candidate,
        reply: bytes,
        receipt: dict[str, Any] | None,
    ) -> None:
        opinions = dict(dispute.opinions)
        opinions[arbiter.node_id] = Opinion(
            arbiter.node_id, output_digest(reply, dispute.last_hop), receipt
        ).to_json()
        majority = [honest, arbiter.node_id]
        evidence = {
            "route_session_id": dispute.route_session_id,
            "layers": [dispute.start, dispute.end],
            "steps_replayed": len(dispute.frames),
            "input_sha256": [input_sha256(f) for f in dispute.frames],
            "comparison": dispute.detail,
            "difference": dispute.difference,
            "tolerance": dispute.tolerance,
            "accused": liar,
            "majority": majority,
            "opinions": opinions,
            "accused_bound_by_receipt": bool((opinions.get(liar) or {}).get("bound_by_receipt")),
            "arbiter": arbiter.node_id,
            "dispute_id": dispute.dispute_id,
            "disputed_at": dispute.at,
            "at": time.time(),
        }
        reason = (
            f"a hop audit found this node's output for layers {dispute.start}-{dispute.end} "
            f"disagreeing with node {honest[:12]}, and arbiter {arbiter.node_id[:12]} replayed "
            f"the steps and sided with it ({dispute.detail}); its operator must fix the node "
            "and register a new identity"
        )
        self._board.resolve(dispute.dispute_id)
        await self._auditor.convict(liar, reason, evidence, majority)
