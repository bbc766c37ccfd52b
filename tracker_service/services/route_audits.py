"""The hop audits of one route session, run off its critical path.

Every reply of a hop that opened with ``step_receipts`` comes with the hop's signed
receipt for its steps so far, whose ``output_sha256`` is that reply's digest
(docs/wire.md#step-receipts), so the node is bound to every output without knowing
which step is sampled. A sampled step copies the hop's inputs so far, its reply and
that receipt, and hands them to a background task; the step returns at once. A
verdict that quarantines or withdraws a hop fails the route at its next step, or at
``close``. At most ``max_in_flight`` audits run per session, one per hop at most (a
hop's step is not sampled while either bound is reached), so a fast stream cannot
pile up replays.

An audit that cannot finish within its budget (which grows with the session's
length, ``StepAuditor.budget_s``) is not free: the hop's node is in ``unpaid``, and
the session's close credits none of its receipts (route_session.py).

A node on probation (``StepAuditor.policy_for``) is audited inline: its sampled step
waits for the verdict, so a stranger's lie on a sampled step never reaches a user.
An inline audit that does not find the step right (no other node answered the
replay, it ran out of time, or no two of three nodes agreed) withholds the step:
the route fails at that hop (``unchecked``) and the gateway fails over without the
node, as for a hop that broke. So is a node audited inline that signs no step
receipts (an older node): its hop is closed for the receipt when the audit
convicts it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from tracker_service.errors import RouteFailure
from tracker_service.services.hop_link import HopLink
from tracker_service.services.session_plan import RoutePlan

if TYPE_CHECKING:
    from tracker_service.services.step_audit import StepAuditor

log = logging.getLogger(__name__)

DISPUTED = "disputed"  # the hop's node is in an open audit dispute (disputes.py)
QUARANTINED = "quarantined"
TIMED_OUT = "timed_out"  # hop_audit.TIMED_OUT: the audit could not finish
AGREED = "agreed"  # hop_audit: a second node gave the same answer
LONE = "lone"  # hop_audit: nobody else holds the layers, and the node may serve them
# An inline (probation) audit that gave no verdict: its step is withheld, the route fails.
UNCHECKED = "unchecked"
AUDIT_SLACK_S = 5.0

Receipt = dict[str, Any]
# Close the hop at once for its receipt: the binding of an inline audit of a node that
# signs no step receipts.
ReceiptNow = Callable[[int], Awaitable[Receipt | None]]


class RouteAudits:
    """Samples a route's steps for audit and keeps the verdict that ends the route."""

    def __init__(
        self,
        auditor: StepAuditor | None,
        plan: RoutePlan,
        *,
        max_in_flight: int,
        step_timeout_s: float,
        receipt_now: ReceiptNow,
    ) -> None:
        self._auditor = auditor
        self._plan = plan
        self._max = max(1, max_in_flight)
        self._step_timeout_s = step_timeout_s
        self._receipt_now = receipt_now
        self._tasks: set[asyncio.Task[None]] = set()
        self._audited: set[int] = set()  # hops with an audit in flight
        self.verdict: RouteFailure | None = None  # a background audit's conviction
        self.unpaid: set[str] = set()  # nodes whose audit in this session timed out

    async def set_policies(self, hops: Sequence[HopLink]) -> None:
        """Each hop's audit rate, and whether its node is on probation (audited inline)."""
        if self._auditor is None:
            return
        for hop in hops:
            policy = await asyncio.to_thread(self._auditor.policy_for, hop.plan.node_id)
            hop.audit_rate, hop.audit_inline = policy

    def check(self) -> None:
        """Raise the conviction of a background audit, if one came in."""
        if self.verdict is not None:
            raise self.verdict

    async def after_step(self, hop: HopLink, frame: bytes, reply: bytes) -> None:
        """Hand a sampled step to the auditor, in the background where the hop can bind it.

        A hop whose node is in an open audit dispute (found by this or another
        route's audit) ends the route at once: no step of any route is answered
        through it meanwhile.
        """
        if self._auditor is None:
            return
        if self._auditor.withdrawn(hop.plan.node_id):
            raise hop.fail(
                DISPUTED, "this node is in an audit dispute; it serves no user until it is settled"
            )
        if hop.audit_rate <= 0:
            return
        hop.inputs.append(frame)
        if len(self._tasks) >= self._max or hop.index in self._audited:
            return  # full: this step is not sampled (replays never pile up)
        if not self._auditor.sample(hop.audit_rate):
            return
        frames = list(hop.inputs)  # a copy: the hop's inputs grow while the audit runs
        signed = hop.step_receipt if hop.step_receipts else None

        async def bind() -> Receipt | None:
            # The receipt that came with this very reply; without one, close the hop for it.
            return signed if signed is not None else await self._receipt_now(hop.index)

        if hop.audit_inline or signed is None:
            verdict = await self._audit(hop, frames, reply, bind=bind)
            failure = _failure_of(hop, verdict)
            if failure is not None:
                raise failure
            if hop.audit_inline and not _checked(hop, verdict):
                raise hop.fail(
                    UNCHECKED,
                    "no other node could check this new node's step in time; the step is "
                    "withheld and the answer goes on through other nodes",
                )
            return
        task = asyncio.create_task(self._background(hop, frames, reply, bind))
        self._tasks.add(task)
        self._audited.add(hop.index)

        def done(finished: asyncio.Task[None]) -> None:
            self._tasks.discard(finished)
            self._audited.discard(hop.index)

        task.add_done_callback(done)

    async def _background(
        self,
        hop: HopLink,
        frames: list[bytes],
        reply: bytes,
        bind: Callable[[], Awaitable[Receipt | None]],
    ) -> None:
        try:
            verdict = await self._audit(hop, frames, reply, bind=bind)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("the audit of hop %d failed", hop.index)
            return
        failure = _failure_of(hop, verdict)
        if failure is not None and self.verdict is None:
            self.verdict = failure

    async def _audit(
        self,
        hop: HopLink,
        frames: list[bytes],
        reply: bytes,
        *,
        bind: Callable[[], Awaitable[Receipt | None]],
    ) -> Any:
        """The auditor's verdict, or None for an audit past the step deadline (dropped)."""
        assert self._auditor is not None
        # The auditor's own budget (longer for a longer session) ends it first; this
        # bound only stops an auditor that overran it.
        budget = getattr(self._auditor, "budget_s", None)  # an auditor without one: the step's
        bound = self._step_timeout_s
        if budget is not None:
            bound = max(bound, budget(frames) + AUDIT_SLACK_S)
        try:
            async with asyncio.timeout(bound):
                verdict = await self._auditor.audit(self._plan, hop.index, frames, reply, bind=bind)
        except TimeoutError:
            log.info("audit of hop %d ran past %.0f s; the hop earns nothing", hop.index, bound)
            self.unpaid.add(hop.plan.node_id)
            return None
        if getattr(verdict, "outcome", None) == TIMED_OUT:
            self.unpaid.add(hop.plan.node_id)
        return verdict

    async def wait(self) -> None:
        """Let the background audits finish (each bounded by the step timeout)."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def running(self) -> list[asyncio.Task[None]]:
        return list(self._tasks)


def _checked(hop: HopLink, verdict: Any) -> bool:
    """The verdict found the hop's step right: a second node agreed, or a majority
    agreeing with the hop convicted another; or nobody else holds its layers and the
    tracker lets its node serve them (``lone``: the route planner's rule, which forms
    no route through such a newcomer on a public tracker). Not when no node that
    could replay it answered (``skipped``), the audit ran out of time, or no two of
    three agreed."""
    outcome = getattr(verdict, "outcome", None)
    if outcome in (AGREED, LONE):
        return True
    return outcome == QUARANTINED and hop.plan.node_id not in verdict.quarantined


def _failure_of(hop: HopLink, verdict: Any) -> RouteFailure | None:
    """The route's failure when the verdict took the hop's node out of serving."""
    if hop.plan.node_id in getattr(verdict, "quarantined", ()):
        return hop.fail(
            QUARANTINED, "a hop audit found this node's output wrong; it is quarantined"
        )
    if hop.plan.node_id in getattr(verdict, "withdrawn", ()):
        return hop.fail(
            DISPUTED,
            "a hop audit found this node and another disagreeing; neither serves "
            "until a third node decides",
        )
    return None
