"""The credit ledger's write side: verified hop receipts in, hourly buckets out.

A route session hands its verified receipts here when it closes
(:meth:`CreditLedger.credit_receipts`); receipts that close in the same turn
of the event loop share one commit (as heartbeats do, store/group_commit.py),
so a busy gateway costs the store one transaction per turn, and each
transaction one upsert per (node, hour) it touches. The caller's await ends
when the commit holding its credit is done: acknowledged credit is durable.

A hop earns nothing when the session's API key is linked to the same account
as the hop's node, or when the key is linked to no account and the request came
from the node's own address group (no key at all: the loopback-only gateway of
a tracker without keys, the operator's own) (a contributor's own requests); it is still
counted as an ``own_hop`` so the rule shows in the ledger.

Spending: :meth:`CreditLedger.reserve` holds a request's worst case when it starts
and :meth:`CreditLedger.settle` spends what it used when it ends
(store/credit_balances.py). :class:`LeaderboardCache` keeps each leaderboard a
few seconds, so the API does not re-sum the ledger per request.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool

from tracker_service.domain.credit_rules import (
    DEFAULT_COST_PER_LAYER,
)
from tracker_service.domain.tickets import HopReceipt
from tracker_service.services.credit_policy import LeaderRow, VerifiedHop, hop_rows, leaderboards
from tracker_service.services.session_plan import RoutePlan
from tracker_service.store import credit_balances
from tracker_service.store.credits import CreditRow, CreditWriter, cap_hosts, linked_members
from tracker_service.store.db import Database

log = logging.getLogger(__name__)

Fingerprint = tuple[str, str]
LINKS_CACHE_S = 2.0  # as the gateway's check of whether keys are configured
BOARD_TTL_S = 30.0  # a leaderboard is rebuilt at most this often while nothing changes
BOARD_DIRTY_S = 2.0  # ... and at most this often while credit is being written


@dataclass(frozen=True)
class Reservation:
    """Credit a request holds while it runs: per identity of the paying account."""

    account: str
    takes: dict[str, float]
    hold: str  # its id in the store: an unsettled hold expires (store/credit_balances.py)

    @property
    def amount(self) -> float:
        return sum(self.takes.values())


class LeaderboardCache:
    """Every kind's ranked rows, from one sum of the ledger (so they agree), rebuilt
    when older than BOARD_TTL_S, or BOARD_DIRTY_S after this replica wrote credit; at
    once after an account is linked here. One rebuild at a time (the others wait for
    it and share it)."""

    def __init__(self, database: Database, clock: Callable[[], float] = time.monotonic) -> None:
        self._db = database
        self._clock = clock
        self._lock = threading.Lock()
        self._boards: dict[str, list[LeaderRow]] = {}  # every kind, from one sum
        self._built_at: float | None = None
        self._dirty_at: float | None = None
        self.rebuilds = 0

    def changed(self) -> None:
        """Credit was written: rebuild soon (BOARD_DIRTY_S), not per request."""
        with self._lock:
            self._dirty_at = self._clock()  # the latest write

    def invalidate(self) -> None:
        """An account was linked (rare, and its owner looks at once): rebuild on next read."""
        with self._lock:
            self._built_at = None

    def rows(self, kind: str) -> list[LeaderRow]:
        """Blocking: the leaderboard of `kind` (account, identity, team)."""
        with self._lock:
            now = self._clock()
            if self._built_at is None or not self._fresh(self._built_at, now):
                with self._db.session() as session:
                    self._boards = leaderboards(session, now=time.time())
                self._built_at = now
                self.rebuilds += 1
            return self._boards[kind]

    def _fresh(self, built_at: float, now: float) -> bool:
        if now - built_at > BOARD_TTL_S:
            return False
        dirty = self._dirty_at is not None and self._dirty_at >= built_at
        return not dirty or now - built_at < BOARD_DIRTY_S

    def find(self, credit_id: str) -> LeaderRow | None:
        """One account, identity or team by its id (account names are looked up first)."""
        for kind in ("account", "identity", "team"):
            for row in self.rows(kind):
                if row.id == credit_id and (row.kind == kind or kind == "account"):
                    return row
        return None


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
        self.spent = 0.0  # credit settled by this replica's requests since it started
        self._writer = CreditWriter(database)
        self._links_lock = threading.Lock()
        self._links_at = -1e18
        self._linked: tuple[dict[int, str], dict[str, str]] = ({}, {})
        self.board = LeaderboardCache(database)

    def cost_per_layer(self, fingerprint: Fingerprint) -> float:
        return self._costs.get(fingerprint, DEFAULT_COST_PER_LAYER)

    def hops_of(
        self,
        plan: RoutePlan,
        receipts: Sequence[HopReceipt],
        key_id: int | None,
        caller_host: str | None = None,
    ) -> list[VerifiedHop]:
        cost = self.cost_per_layer(plan.fingerprint)
        now = self._clock()
        return [
            VerifiedHop(r.node_id, r.tokens, r.end - r.start, cost, key_id, now, caller_host)
            for r in receipts
            if r.tokens > 0 and r.end > r.start
        ]

    async def credit_receipts(
        self,
        plan: RoutePlan,
        receipts: Sequence[HopReceipt],
        *,
        key_id: int | None,
        caller_host: str | None = None,
    ) -> None:
        await self.credit(self.hops_of(plan, receipts, key_id, caller_host))

    def sink(self, key_id: int | None, caller_host: str | None = None) -> ReceiptSink:
        """What a route session calls with its verified receipts, for this caller."""
        return ReceiptSink(self, key_id, caller_host)

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
        node_hosts = self._hosts_of(hops)
        written = self._writer.add(self._rows(hops, key_accounts, node_accounts, node_hosts))
        self.commits += 1
        self.board.changed()
        return written

    def _hosts_of(self, hops: Sequence[VerifiedHop]) -> dict[str, str]:
        """The address each node is counted by, for the hops of a key's request (the
        own-address rule, linked key or not); read only when there are such hops."""
        wanted = {h.node_id for h in hops if h.caller_host and h.key_id is not None}
        if not wanted:
            return {}
        with self._db.session() as session:
            return cap_hosts(session, sorted(wanted))

    def account_of(self, key_id: int | None) -> str | None:
        """Blocking: the account a key is linked to (cached LINKS_CACHE_S)."""
        return None if key_id is None else self._links()[0].get(key_id)

    def reserve(self, key_id: int | None, cost: float) -> Reservation | None:
        """Blocking: hold a request's worst-case `cost` of its key's account's credit;
        None (a free request) when the key is linked to no account or it has less left."""
        try:
            account = self.account_of(key_id)
            if account is None or cost <= 0:
                return None
            hold = uuid.uuid4().hex
            with self._db.sessions.begin() as session:
                takes = credit_balances.reserve(session, account, cost, now=time.time(), hold=hold)
        except Exception as exc:  # the store is busy or down: serve the request as free
            log.warning("a credit reservation failed, the request goes free: %s", exc)
            return None
        return Reservation(account, takes, hold) if takes else None

    def settle(self, reservation: Reservation, cost: float) -> float:
        """Blocking: spend what the request used (at most what it held), free the rest."""
        with self._db.sessions.begin() as session:
            spent = credit_balances.settle(
                session, reservation.takes, cost, now=time.time(), hold=reservation.hold
            )
        self.spent += spent
        return spent

    def release_expired(self, now: float | None = None) -> int:
        """Blocking: give back the holds of requests that never settled (crashed, or
        their settle failed) once they expired; returns how many."""
        with self._db.sessions.begin() as session:
            released = credit_balances.release_expired(
                session, now=time.time() if now is None else now
            )
        if released:
            log.info("released %d expired credit reservations", released)
        return released

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
        node_hosts: Mapping[str, str],
    ) -> list[CreditRow]:
        return hop_rows(hops, key_accounts, node_accounts, node_hosts)


@dataclass(frozen=True)
class ReceiptSink:
    """A route session's callback: its verified receipts, credited to the hops' nodes."""

    ledger: CreditLedger
    key_id: int | None
    caller_host: str | None = None

    async def __call__(self, plan: RoutePlan, receipts: Sequence[HopReceipt]) -> None:
        await self.ledger.credit_receipts(
            plan, receipts, key_id=self.key_id, caller_host=self.caller_host
        )
