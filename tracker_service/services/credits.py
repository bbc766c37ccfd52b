"""The credit ledger's write side: verified hop receipts in, hourly buckets out.

A route session hands its verified receipts here when it closes
(:meth:`CreditLedger.credit_receipts`); receipts that close in the same turn
of the event loop share one commit (as heartbeats do, store/group_commit.py),
so a busy gateway costs the store one transaction per turn, and each
transaction one upsert per (node, hour) it touches. The caller's await ends
when the commit holding its credit is done: acknowledged credit is durable.

A hop earns nothing when the session's API key is linked to the same account
as the hop's node (a contributor's own requests); it is still counted as an
``own_hop`` so the rule shows in the ledger.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool

from tracker_service.domain.credit_rules import (
    DEFAULT_COST_PER_LAYER,
    bucket_of,
    hop_credit,
    priority_cost,
)
from tracker_service.domain.tickets import HopReceipt
from tracker_service.services.session_plan import RoutePlan
from tracker_service.store.credits import (
    CreditRow,
    CreditWriter,
    account_balance,
    linked_members,
    spend_credit,
)
from tracker_service.store.db import Database

log = logging.getLogger(__name__)

Fingerprint = tuple[str, str]
LINKS_CACHE_S = 2.0  # as the gateway's check of whether keys are configured
BALANCE_CACHE_S = 2.0


@dataclass(frozen=True)
class VerifiedHop:
    node_id: str
    tokens: int
    layers: int
    cost_per_layer: float
    key_id: int | None
    at: float


class CreditLedger:
    """``await ledger.credit_receipts(plan, receipts, key_id=...)``, once committed."""

    def __init__(
        self,
        database: Database,
        *,
        layer_costs: Mapping[Fingerprint, float] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = database
        self._costs = dict(layer_costs or {})
        self._clock = clock
        self._pending: list[tuple[list[VerifiedHop], asyncio.Future[None]]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._flushing = False
        self._flush_task: asyncio.Task[None] | None = None
        self.commits = 0  # transactions written, for the benchmark
        self._writer = CreditWriter(database)
        self._links_lock = threading.Lock()
        self._links_at = -1e18
        self._linked: tuple[dict[int, str], dict[str, str]] = ({}, {})
        self._balances: dict[str, tuple[float, float]] = {}  # account -> (read at, balance)

    def cost_per_layer(self, fingerprint: Fingerprint) -> float:
        return self._costs.get(fingerprint, DEFAULT_COST_PER_LAYER)

    def hops_of(
        self, plan: RoutePlan, receipts: Sequence[HopReceipt], key_id: int | None
    ) -> list[VerifiedHop]:
        cost = self.cost_per_layer(plan.fingerprint)
        now = self._clock()
        return [
            VerifiedHop(r.node_id, r.tokens, r.end - r.start, cost, key_id, now)
            for r in receipts
            if r.tokens > 0 and r.end > r.start
        ]

    async def credit_receipts(
        self, plan: RoutePlan, receipts: Sequence[HopReceipt], *, key_id: int | None
    ) -> None:
        await self.credit(self.hops_of(plan, receipts, key_id))

    def sink(self, key_id: int | None) -> ReceiptSink:
        """What a route session calls with its verified receipts, for this caller's key."""
        return ReceiptSink(self, key_id)

    async def credit(self, hops: list[VerifiedHop]) -> None:
        if not hops:
            return
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop, self._pending, self._flushing = loop, [], False
        future: asyncio.Future[None] = loop.create_future()
        self._pending.append((hops, future))
        if not self._flushing:
            self._flushing = True
            self._flush_task = loop.create_task(self._flush_all())
        await future

    async def _flush_all(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                try:
                    await run_in_threadpool(self.write, [h for hops, _ in batch for h in hops])
                except Exception as exc:
                    log.error("a credit commit of %d batches failed: %s", len(batch), exc)
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                for _, future in batch:
                    if not future.done():
                        future.set_result(None)
        finally:
            self._flushing = False

    def write(self, hops: Sequence[VerifiedHop]) -> int:
        """Blocking: resolve own-key hops and add every hop's credit in one commit."""
        key_accounts: dict[int, str] = {}
        node_accounts: dict[str, str] = {}
        if any(h.key_id is not None for h in hops):
            key_accounts, node_accounts = self._links()
        written = self._writer.add(self._rows(hops, key_accounts, node_accounts))
        self.commits += 1
        return written

    def credited(self, key_id: int | None) -> str | None:
        """Blocking: the account whose credit this key's requests spend, when it has
        credit left (cached BALANCE_CACHE_S); None for a free request."""
        if key_id is None:
            return None
        account = self._links()[0].get(key_id)
        if account is None:
            return None
        now = time.monotonic()
        cached = self._balances.get(account)
        if cached is None or now - cached[0] > BALANCE_CACHE_S:
            with self._db.session() as session:
                cached = (now, account_balance(session, account))
            self._balances[account] = cached
        return account if cached[1] > 0 else None

    def spend(self, account: str, tokens: int) -> None:
        """Blocking: charge a prioritized request to its account."""
        cost = priority_cost(tokens)
        if cost <= 0:
            return
        with self._db.sessions.begin() as session:
            spend_credit(session, account, cost)
        self._balances.pop(account, None)

    def _links(self) -> tuple[dict[int, str], dict[str, str]]:
        """Linked keys and their accounts' identities, re-read at most every LINKS_CACHE_S
        (a key linked a moment ago may earn its own nodes credit for that long)."""
        now = time.monotonic()
        with self._links_lock:
            if now - self._links_at > LINKS_CACHE_S:
                with self._db.session() as session:
                    self._linked = linked_members(session)
                self._links_at = now
            return self._linked

    @staticmethod
    def _rows(
        hops: Sequence[VerifiedHop],
        key_accounts: Mapping[int, str],
        node_accounts: Mapping[str, str],
    ) -> list[CreditRow]:
        rows = []
        for hop in hops:
            payer = key_accounts.get(hop.key_id) if hop.key_id is not None else None
            own = payer is not None and node_accounts.get(hop.node_id) == payer
            rows.append(
                CreditRow(
                    hop.node_id,
                    bucket_of(hop.at),
                    credit=0.0 if own else hop_credit(hop.tokens, hop.layers, hop.cost_per_layer),
                    hops=1,
                    tokens=hop.tokens,
                    layer_tokens=hop.tokens * hop.layers,
                    own_hops=1 if own else 0,
                )
            )
        return rows


@dataclass(frozen=True)
class ReceiptSink:
    """A route session's callback: its verified receipts, credited to the hops' nodes."""

    ledger: CreditLedger
    key_id: int | None

    async def __call__(self, plan: RoutePlan, receipts: Sequence[HopReceipt]) -> None:
        await self.ledger.credit_receipts(plan, receipts, key_id=self.key_id)
