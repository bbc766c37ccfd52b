"""A route's receipts: each hop's signed receipt checked against the work the route sent
it, and what the route pays for them (docs/credits.md).

A route pays its hops' verified receipts when it closes, or, dropped by a failover, the
steps each hop's last signed step receipt verified. Either way only for the positions
past those an earlier route of the same answer already paid on the hop's layers: the
replacement route's replay of a prefix earns nothing, so each layer of each position of
an answer is credited at most once.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import replace
from typing import Any

from tracker_service.domain import wire_frames
from tracker_service.domain.tickets import (
    HopReceipt,
    check_receipt_matches,
    frame_output_digest,
    verify_receipt,
)
from tracker_service.errors import ReceiptError, RouteFailure
from tracker_service.services.hop_link import (
    BAD_RECEIPT,
    CHAIN_BROKEN,
    CHAIN_FORGED,
    CHAIN_REFUSED,
    CONNECTION_CLOSED,
    DEPARTURE_REASONS,
    TIMEOUT,
    UNREACHABLE,
    HopLink,
)
from tracker_service.services.route_audits import DISPUTED, QUARANTINED
from tracker_service.services.session_plan import RoutePlan

log = logging.getLogger(__name__)

# Called with a route's verified receipts (the credit ledger, services/credits.py).
ReceiptsHook = Callable[[RoutePlan, Sequence[HopReceipt]], Awaitable[None]]


def reply_output_digest(reply: bytes, *, last_hop: bool, max_bytes: int) -> str:
    """The digest a hop's receipt signs for this reply: the frame's bytes, for every hop
    (the last hop's hold its token ids, top ids and log-probs, and kept drafts)."""
    del last_hop, max_bytes  # one rule for every hop since the last hop's top ids are bound
    return frame_output_digest(reply)


def verified_receipt(
    plan: RoutePlan,
    hop: HopLink,
    message: dict[str, Any],
    *,
    steps: int,
    tokens: int,
    last_reply: bytes | None,
    max_reply: int,
) -> HopReceipt:
    """The hop's receipt, checked against its key and the work this route sent it."""
    try:
        receipt = verify_receipt(message, hop.plan.public_key)
        digest = None
        if last_reply is not None:
            digest = reply_output_digest(
                last_reply, last_hop=hop.plan.end == plan.layer_count, max_bytes=max_reply
            )
        check_receipt_matches(
            receipt,
            route_session_id=plan.route_session_id,
            epoch=plan.epoch,
            hop=hop.plan.ticket_hop,
            steps=steps,
            tokens=tokens,
            output_sha256=digest,
        )
    except (ReceiptError, wire_frames.FrameError) as exc:
        raise hop.fail(BAD_RECEIPT, str(exc)) from exc
    return receipt


# A route dropped for these reasons is a fault of no one's work: every hop is paid the
# steps it verified (the node left, its link or the chain's link broke, it went quiet).
NO_FAULT = DEPARTURE_REASONS | {
    CONNECTION_CLOSED,
    TIMEOUT,
    UNREACHABLE,
    CHAIN_REFUSED,
    CHAIN_BROKEN,
}
# ... and for these a hop lied or is suspected of lying: the route earns nothing, as a
# route with a convicted hop earns nothing at its close.
CONVICTED = frozenset({QUARANTINED, DISPUTED, CHAIN_FORGED})


def payable_after(failure: RouteFailure | None, unpaid: Collection[str]) -> set[str] | None:
    """The nodes a route dropped by ``failure`` must not pay (None: it pays no one): any
    other fault (a protocol error, a bad receipt, a mismatched chain step) leaves the
    failing hop's node unpaid and pays the others."""
    if failure is None or failure.reason in NO_FAULT:
        return set(unpaid)
    if failure.reason in CONVICTED:
        return None
    return {*unpaid, failure.node_id}


class RoutePay:
    """What one route pays, given the positions earlier routes of its answer paid."""

    def __init__(
        self, plan: RoutePlan, on_receipts: ReceiptsHook | None, credited_layers: Sequence[int]
    ) -> None:
        self._plan = plan
        self._on_receipts = on_receipts
        self._credited = list(credited_layers)

    async def pay(self, receipts: Sequence[HopReceipt], unpaid: Collection[str]) -> None:
        """Credit the receipts of hops not in ``unpaid`` (their audits did not pass), for
        the positions past those already paid on their layers."""
        paid = []
        for receipt in receipts:
            before = max(self._credited[receipt.start : receipt.end], default=0)
            if receipt.node_id not in unpaid and receipt.tokens > before:
                paid.append(replace(receipt, tokens=receipt.tokens - before))
        if paid and self._on_receipts is not None:
            try:
                await self._on_receipts(self._plan, paid)
            except Exception:
                log.exception("crediting route %s failed", self._plan.route_session_id)

    def paid_layers(self, verified: Sequence[HopReceipt]) -> list[int]:
        """Per layer, the positions paid once ``verified`` is: what a replacement route of
        the same answer must not pay again."""
        layers = self._credited + [0] * (self._plan.layer_count - len(self._credited))
        for receipt in verified:
            for layer in range(receipt.start, receipt.end):
                layers[layer] = max(layers[layer], receipt.tokens)
        return layers
