"""Hop audits: the tracker re-asks another node for a sampled hop and compares.

Nodes belong to strangers, and a node that passed the doctor can still return
wrong hidden states. On a fraction of route steps (``rate``; ``probation_rate``
while an identity has passed fewer than ``probation_audits`` audits) the route
client hands the hop's inputs so far and its reply (copies taken at the step)
to :class:`Auditor`, in a background task of the route session: the step is
answered without waiting, and a verdict against the hop fails that route at
its next step or its close (:mod:`tracker_service.services.route_session`). The
auditor opens a one-hop session (:mod:`tracker_service.services.hop_replay`) on a
second node whose shard contains that hop's layers (it stops at the hop's end
inside its shard: ``effective_end`` in the replay's ticket), replays the same
inputs, and compares the last reply within the recipe's tolerance
(:mod:`tracker_service.domain.audit_compare`). A disagreement gets a third
opinion from a third node; the node in the minority is quarantined with the
evidence.

Who judges is chosen at random, never by the parties (:class:`Judges`): every
replayer is independent of the audited node (no shared credit account, network
prefix or invite, :mod:`tracker_service.store.independence`), established nodes
(``auditor_min_audits`` passed, ``auditor_min_age_s`` old) first; a third opinion
or an arbiter, whose word convicts, must be established and independent of both
parties. An audit's budget grows with the session's length; a replayer that
fails or stalls is passed over and counted against itself, never the audited hop;
one that runs out while a replayer is still answering frames (a long session)
is not free: the hop earns nothing for that session (route_audits.py), is audited
at every step of its next sessions until an audit of it completes, and a node
whose audits time out ``timeouts_to_withdraw`` times in a row leaves user routes
(:meth:`DisputeBoard.suspend`).
A last hop is audited the same way (its token, top ids and log-probs), so a
lying last node cannot change answers unseen. With no second node that answers,
the audit is skipped (``lone`` when no other node holds the layers and the tracker
lets the node serve them: an inline audit's step survives only that,
route_audits.py). With no third, the disagreement becomes a dispute
(:mod:`tracker_service.services.disputes`): both nodes are withdrawn from serving,
the audited hop's signed receipt for the audited step is kept (``bind``: the step
receipt the hop sent with that very reply), and an arbiter recruited later
replays the steps (:mod:`tracker_service.services.arbitration`): a quarantine
always needs a majority.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from tracker_service.domain import wire_frames
from tracker_service.domain.audit_compare import Comparison, compare_replies, tolerance_for
from tracker_service.domain.keys import TrackerKey
from tracker_service.domain.route_formation import Candidate
from tracker_service.errors import BudgetSpent
from tracker_service.services.audit_judges import Judges, find_judges
from tracker_service.services.audit_opinions import Opinion, input_sha256, output_digest
from tracker_service.services.audit_settings import AuditSettings
from tracker_service.services.disputes import Dispute, DisputeBoard
from tracker_service.services.hop_replay import end_of, replay_hop
from tracker_service.services.route_session import DEFAULT_MAX_REPLY_BYTES
from tracker_service.services.session_plan import PlannedHop, RoutePlan
from tracker_service.store.db import Database
from tracker_service.store.quarantine import audits_passed, quarantine_node, record_audit_passed
from tracker_service.store.tables import Recipe

log = logging.getLogger(__name__)

QUARANTINED = "quarantined"
# No live node off the route holds the hop's layers, and the tracker lets this node
# serve them unchecked (the route planner's rule: ``vouched``). Not "skipped", which an
# inline audit's step does not survive (route_audits.py).
LONE = "lone"
# AuditSettings lives in audit_settings.py (hop_replay.py reads it too); its callers
# import it from here, with the Auditor it configures.
__all__ = ["AuditSettings", "AuditVerdict", "Auditor", "Opinion"]


Bind = Callable[[], Awaitable[dict[str, Any] | None]]


TIMED_OUT = "timed_out"


@dataclass
class AuditVerdict:
    node_id: str  # the audited node
    outcome: str  # "agreed", "skipped", "lone", "disputed", "quarantined", "timed_out"
    quarantined: list[str] = field(default_factory=list)
    detail: str = ""
    withdrawn: list[str] = field(default_factory=list)  # disputed: out of serving meanwhile


class Auditor:
    """Samples route steps for audit, runs the replays and acts on the verdict."""

    def __init__(
        self,
        database: Database,
        key: TrackerKey,
        settings: AuditSettings | None = None,
        *,
        rng: random.Random | None = None,
        on_quarantine: Callable[[str], object] | None = None,
        disputes: DisputeBoard | None = None,
        vouched: Callable[[list[str]], set[str]] | None = None,
    ) -> None:
        self._db = database
        # Who may serve a range no other node holds (RoutePlanner.vouched); None: anyone.
        self._vouched = vouched
        self.disputes = disputes
        self._key = key
        self.settings = settings or AuditSettings()
        self._rng = rng or random.Random()
        self._on_quarantine = on_quarantine
        self.audits = 0
        self.timeouts: Counter[str] = Counter()  # a node's audits timed out in a row
        self.replay_stalls: Counter[str] = Counter()  # a replayer's replays failed in a row
        self.audit_first: set[str] = set()  # audited at every step until one completes
        self.verdicts: list[AuditVerdict] = []  # the latest 1000
        self.outcomes: Counter[str] = Counter()  # every verdict's outcome, for soaks and stats

    # -- sampling ----------------------------------------------------------------------------

    def policy_for(self, node_id: str) -> tuple[float, bool]:
        """(the fraction of this node's steps to audit, whether to audit them inline).

        An identity on probation is audited at ``probation_rate`` and inline: its
        sampled step waits for the verdict, so a new node that lies is convicted
        before its output reaches anyone. An established one is audited in the
        background of the route (route_audits.py), off the stream's critical path.
        """
        with self._db.session() as session:
            passed = audits_passed(session, node_id)
        first = 1.0 if node_id in self.audit_first else 0.0  # its last audit timed out
        if passed < self.settings.probation_audits:
            return max(first, self.settings.probation_rate), True
        return max(first, self.settings.rate), False

    def budget_s(self, frames: Sequence[bytes]) -> float:
        """How long an audit of these frames may take: more for a longer session."""
        positions = max((end_of(f) for f in frames), default=0)
        grown = self.settings.timeout_s + self.settings.timeout_per_position_s * positions
        return min(self.settings.timeout_max_s, grown)

    def sample(self, rate: float) -> bool:
        return rate > 0 and self._rng.random() < rate

    def withdrawn(self, node_id: str) -> bool:
        """In an open dispute: a route through this node fails over at its next step."""
        return self.disputes is not None and self.disputes.is_withdrawn(node_id)

    # -- one audit ---------------------------------------------------------------------------

    async def audit(
        self,
        plan: RoutePlan,
        hop_index: int,
        frames: Sequence[bytes],
        observed: bytes,
        *,
        bind: Bind | None = None,
    ) -> AuditVerdict:
        hop = plan.hops[hop_index]
        # A last hop is always opened greedy (route_session.py): sampled answers are drawn
        # at the gateway from its top log-probs, so its reply replays like any other.
        budget = self.budget_s(frames)
        deadline = asyncio.get_running_loop().time() + budget
        try:
            verdict = await self._audit(plan, hop, frames, observed, bind, deadline)
        except BudgetSpent:
            # a replayer was still working through the frames: the session is too long
            # for the budget, which is the audited hop's to answer for
            return self._done(self.timed_out(hop.node_id, budget))
        if verdict.outcome == "agreed":
            self.timeouts.pop(hop.node_id, None)
            self.audit_first.discard(hop.node_id)
        return verdict

    def timed_out(self, node_id: str, budget: float) -> AuditVerdict:
        """An audit of this node ran out of time: it is audited first from now on, and
        one whose audits keep timing out leaves user routes."""
        self.timeouts[node_id] += 1
        self.audit_first.add(node_id)
        count = self.timeouts[node_id]
        detail = f"the audit timed out after {budget:.0f} s ({count} in a row)"
        if count >= self.settings.timeouts_to_withdraw and self.disputes is not None:
            self.disputes.suspend(
                node_id,
                f"{count} audits of this node in a row could not finish; it serves no user "
                "until its operator restarts it",
            )
            log.warning("audit: node %s withdrawn: %s", node_id[:12], detail)
        return AuditVerdict(node_id, TIMED_OUT, detail=detail)

    async def _opinion(
        self,
        plan: RoutePlan,
        hop: PlannedHop,
        others: list[Candidate],
        frames: Sequence[bytes],
        deadline: float,
    ) -> tuple[Candidate, bytes, dict[str, Any] | None] | None:
        """The next candidate that answers the replay (one that cannot is passed over);
        None once the budget is gone (the audit is skipped, not charged to the hop)."""
        last = hop.end == plan.layer_count
        loop = asyncio.get_running_loop()
        while others and loop.time() < deadline:
            node = others.pop(0)
            reply, receipt = await self.replay(
                plan.fingerprint,
                plan.layer_count,
                hop.effective_start,
                node,
                frames,
                last,
                end=hop.end,
                deadline=deadline,
            )
            if reply:
                return node, reply, receipt
        return None

    async def _audit(
        self,
        plan: RoutePlan,
        hop: PlannedHop,
        frames: Sequence[bytes],
        observed: bytes,
        bind: Bind | None,
        deadline: float,
    ) -> AuditVerdict:
        last = hop.end == plan.layer_count
        self.audits += 1
        judges = await asyncio.to_thread(self._auditors, plan, hop)
        if not judges.able and await asyncio.to_thread(self._lone_vouched, hop.node_id):
            return self._done(
                AuditVerdict(hop.node_id, LONE, detail="no other node holds these layers")
            )
        answered = await self._opinion(plan, hop, judges.seconds(hop.node_id), frames, deadline)
        if answered is None:
            return self._done(
                AuditVerdict(hop.node_id, "skipped", detail="no other node could replay this hop")
            )
        tolerance = await asyncio.to_thread(self._tolerance, plan.fingerprint)
        second_node, second, second_receipt = answered
        first_vs_second = self.compare(observed, second, last, tolerance)
        if first_vs_second.agree:
            await asyncio.to_thread(self._passed, [hop.node_id, second_node.node_id])
            return self._done(AuditVerdict(hop.node_id, "agreed", detail=first_vs_second.detail))
        opinions = {
            hop.node_id: Opinion(hop.node_id, output_digest(observed, last), None),
            second_node.node_id: Opinion(
                second_node.node_id, output_digest(second, last), second_receipt
            ),
        }
        # The third word convicts one of the two: established, tied to neither.
        deciders = judges.deciders([hop.node_id, second_node.node_id])
        third_answer = await self._opinion(plan, hop, deciders, frames, deadline)
        if third_answer is None:
            return await self._dispute(
                plan,
                hop,
                frames,
                {hop.node_id: observed, second_node.node_id: second},
                opinions,
                first_vs_second,
                bind,
            )
        third_node, third, third_receipt = third_answer
        opinions[third_node.node_id] = Opinion(
            third_node.node_id, output_digest(third, last), third_receipt
        )
        with_first = self.compare(observed, third, last, tolerance)
        with_second = self.compare(second, third, last, tolerance)
        if with_second.agree and not with_first.agree:
            liar, majority = hop.node_id, [second_node.node_id, third_node.node_id]
            why = first_vs_second
        elif with_first.agree and not with_second.agree:
            liar, majority = second_node.node_id, [hop.node_id, third_node.node_id]
            why = with_second
        else:
            return self._done(
                AuditVerdict(hop.node_id, "disputed", detail="no two of three nodes agree")
            )
        if liar == hop.node_id and bind is not None:
            # The accused's own signature over what it sent: its receipt taken right
            # after the disputed step, so output_sha256 is the digest of that output.
            accused = opinions[liar]
            opinions[liar] = Opinion(liar, accused.output_sha256, await bind())
        evidence = {
            "route_session_id": plan.route_session_id,
            "layers": [hop.effective_start, hop.end],
            "steps_replayed": len(frames),
            "input_sha256": [input_sha256(f) for f in frames],
            "comparison": why.detail,
            "difference": why.difference,
            "tolerance": why.tolerance,
            "accused": liar,
            "majority": majority,
            "opinions": {k: v.to_json() for k, v in opinions.items()},
            "accused_bound_by_receipt": opinions[liar].bound(),
            "at": time.time(),
        }
        reason = (
            f"a hop audit found this node's output for layers {hop.effective_start}-{hop.end} "
            f"disagreeing with nodes {', '.join(n[:12] for n in majority)} ({why.detail}); "
            "its operator must fix the node and register a new identity"
        )
        await self.convict(liar, reason, evidence, majority)
        return self._done(AuditVerdict(hop.node_id, QUARANTINED, [liar], why.detail))

    async def convict(
        self, liar: str, reason: str, evidence: dict[str, Any], majority: list[str]
    ) -> None:
        """Quarantine the minority with its evidence; the majority's audits count as passed."""
        done = await asyncio.to_thread(self._quarantine, liar, reason, evidence, majority)
        if self.disputes is not None:
            self.disputes.forget_node(liar)  # any dispute it was in is settled
        if done and self._on_quarantine is not None:
            self._on_quarantine(liar)
        log.warning("audit: node %s quarantined: %s", liar[:12], reason)

    async def _dispute(
        self,
        plan: RoutePlan,
        hop: PlannedHop,
        frames: Sequence[bytes],
        replies: dict[str, bytes],
        opinions: dict[str, Opinion],
        why: Comparison,
        bind: Bind | None,
    ) -> AuditVerdict:
        """Two nodes disagree and no third can decide: withdraw both until an arbiter does."""
        nodes = list(replies)
        log.warning(
            "audit: %s and %s disagree on layers %d-%d (%s); no third node to decide: both "
            "withdrawn from serving until an arbiter replays the steps",
            nodes[0][:8],
            nodes[1][:8],
            hop.effective_start,
            hop.end,
            why.detail,
        )
        if self.disputes is None:
            return self._done(AuditVerdict(hop.node_id, "disputed", detail=why.detail))
        if bind is not None:
            # Either may be the liar: keep the audited hop's own signature over what it
            # sent (its receipt for that step); the replayer signed its replay already.
            audited = opinions[hop.node_id]
            opinions[hop.node_id] = Opinion(hop.node_id, audited.output_sha256, await bind())
        self.disputes.add(
            Dispute(
                fingerprint=plan.fingerprint,
                layer_count=plan.layer_count,
                start=hop.effective_start,
                end=hop.end,
                last_hop=hop.end == plan.layer_count,
                frames=tuple(frames),
                replies=replies,
                opinions={k: v.to_json() for k, v in opinions.items()},
                detail=why.detail,
                difference=why.difference,
                tolerance=why.tolerance,
                route_session_id=plan.route_session_id,
            )
        )
        verdict = AuditVerdict(hop.node_id, "disputed", detail=why.detail, withdrawn=nodes)
        return self._done(verdict)

    def _done(self, verdict: AuditVerdict) -> AuditVerdict:
        self.outcomes[verdict.outcome] += 1
        self.verdicts.append(verdict)
        del self.verdicts[:-1000]
        return verdict

    def compare(self, a: bytes, b: bytes, last: bool, tolerance: float) -> Comparison:
        try:
            return compare_replies(
                a, b, last_hop=last, tolerance=tolerance, max_bytes=DEFAULT_MAX_REPLY_BYTES
            )
        except wire_frames.FrameError as exc:
            return Comparison(False, float("inf"), tolerance, f"unreadable reply: {exc}")

    # -- replay ------------------------------------------------------------------------------

    async def replay(
        self,
        fingerprint: tuple[str, str],
        layer_count: int,
        effective_start: int,
        node: Candidate,
        frames: Sequence[bytes],
        last: bool,
        *,
        end: int | None = None,
        deadline: float | None = None,
    ) -> tuple[bytes, dict[str, Any] | None]:
        """The node's reply to the same inputs, on a one-hop session of its own
        (hop_replay.py); a replayer that fails counts in ``replay_stalls``."""
        return await replay_hop(
            self._key,
            self.settings,
            self.replay_stalls,
            fingerprint,
            layer_count,
            effective_start,
            node,
            frames,
            last,
            end=end,
            deadline=deadline,
        )

    # -- store -------------------------------------------------------------------------------

    def _auditors(self, plan: RoutePlan, hop: PlannedHop) -> Judges:
        on_route = {h.node_id for h in plan.hops}
        return self.judges(plan.fingerprint, hop.effective_start, hop.end, on_route, hop.node_id)

    def judges(
        self,
        fingerprint: tuple[str, str],
        start: int,
        end: int,
        leave_out: set[str],
        *parties: str,
    ) -> Judges:
        """Blocking: who could judge the hop ``[start, end)`` (audit_judges.py)."""
        disputed = self.disputes.withdrawn() if self.disputes is not None else frozenset()
        return find_judges(
            self._db,
            fingerprint,
            (start, end),
            leave_out | disputed,  # a node in a dispute judges no one meanwhile
            parties,
            min_audits=self.settings.auditor_min_audits,
            min_age_s=self.settings.auditor_min_age_s,
            rng=self._rng,
        )

    def _lone_vouched(self, node_id: str) -> bool:
        """Blocking: this node may serve a range nobody else holds, unchecked."""
        return self._vouched is None or node_id in self._vouched([node_id])

    def _tolerance(self, key: tuple[str, str]) -> float:
        with self._db.session() as session:
            axes = session.execute(
                select(Recipe.axes).where(
                    Recipe.model_artifact_digest == key[0], Recipe.runtime_recipe_digest == key[1]
                )
            ).scalar_one_or_none()
        axes = axes or {}
        return tolerance_for(
            str(axes.get("compute_dtype", "")), str(axes.get("weight_quantization", "none"))
        )

    def _passed(self, node_ids: list[str]) -> None:
        with self._db.sessions.begin() as session:
            record_audit_passed(session, node_ids)

    def _quarantine(
        self, node_id: str, reason: str, evidence: dict[str, Any], majority: list[str]
    ) -> bool:
        with self._db.sessions.begin() as session:
            record_audit_passed(session, majority)
            return quarantine_node(session, node_id, reason=reason, evidence=evidence)
