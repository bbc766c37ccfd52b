"""What a route session asks of the tracker's hop auditor.

A protocol of its own so the route client (which runs the steps) and the
auditor (which replays them, :mod:`tracker_service.services.hop_audit`) do not import each
other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from tracker_service.services.session_plan import RoutePlan


class StepAuditor(Protocol):
    def policy_for(self, node_id: str) -> tuple[float, bool]:
        """(the fraction of this node's steps to audit, whether inline): higher, and
        inline, while the node is on probation; established nodes in the background."""
        ...

    def withdrawn(self, node_id: str) -> bool:
        """In an open audit dispute: no route step goes through it until it is settled."""
        ...

    def sample(self, rate: float) -> bool: ...

    async def convict(
        self, liar: str, reason: str, evidence: dict[str, Any], majority: list[str]
    ) -> None:
        """Quarantine `liar` on `evidence`: here a chained hop's own signature over a step
        it forged (route_session.py), proof that needs no replay."""
        ...

    def budget_s(self, frames: Sequence[bytes]) -> float:
        """How long an audit of these inputs may take (longer for a longer session)."""
        ...

    async def audit(
        self,
        plan: RoutePlan,
        hop_index: int,
        frames: Sequence[bytes],
        observed: bytes,
        *,
        bind: Callable[[], Awaitable[dict[str, Any] | None]] | None = None,
    ) -> Any:
        """A verdict whose ``quarantined`` lists the node ids taken out of routing.

        ``bind`` returns the audited hop's signed receipt for the audited step
        (None if it gives none): the step receipt it sent with that very reply,
        or for a node without step receipts its closing one (the hop is
        closed). Called only to
        convict or dispute that hop, so the evidence holds the node's own
        signature over the output it sent.
        """
        ...
