"""The data-plane side of the tracker, wired once per app: planner, dialer, certifier,
rebalancer.

``create_app`` builds one :class:`RouteServices` and keeps it on
``app.state.routing``; the lifespan starts and stops its background tasks.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from tracker_service.config import Settings
from tracker_service.domain.keys import TrackerKey
from tracker_service.domain.route_formation import RoutingPolicy
from tracker_service.services.arbiter_loans import ArbiterLoans
from tracker_service.services.arbitration import Arbitration
from tracker_service.services.background import Pruner
from tracker_service.services.certifier import Certifier, CertifierSettings
from tracker_service.services.disputes import DisputeBoard
from tracker_service.services.hop_audit import Auditor, AuditSettings
from tracker_service.services.reachability import ReachabilityMonitor
from tracker_service.services.rebalancing import RebalanceBoard, Rebalancer
from tracker_service.services.route_planner import RoutePlanner
from tracker_service.services.speed_meter import SpeedMeter
from tracker_service.store.db import Database
from tracker_service.store.ledger import PersistentLedger

log = logging.getLogger(__name__)


DEFAULT_HOP_LATENCY_MS = 20.0  # routing.RoutingPolicy's default, for a relayed hop not yet timed


def vouch_all(settings: Settings) -> bool:
    """Every node may serve a range nobody else holds: the operator runs every node, or
    audits are off (no hop is checked anyway)."""
    audits_off = settings.audit_rate == 0 and settings.audit_probation_rate == 0
    return settings.trust_lone_ranges or audits_off


class RouteServices:
    def __init__(
        self,
        settings: Settings,
        database: Database,
        key: TrackerKey,
        ledger: PersistentLedger,
        board: RebalanceBoard | None = None,
        *,
        disputes: DisputeBoard | None = None,
    ) -> None:
        self.settings = settings
        self.disputes = disputes or DisputeBoard()
        board = board or RebalanceBoard()
        self.rebalancer = Rebalancer(
            database,
            board,
            poll_s=settings.rebalance_poll_s,
            margin=settings.rebalance_margin,
            grace_s=settings.rebalance_grace_s,
        )
        self.monitor = ReachabilityMonitor(
            database,
            poll_s=settings.reachability_poll_s,
            recheck_s=settings.reachability_recheck_s,
            retry_s=settings.reachability_retry_s,
            timeout_s=settings.reachability_timeout_s,
            allow_private_endpoints=settings.allow_private_endpoints,
        )
        self.planner = RoutePlanner(
            database,
            key,
            ticket_ttl_s=settings.route_ticket_ttl_s,
            latencies=self.hop_latencies,
            disputes=self.disputes,
            policy=RoutingPolicy(min_measured_steps=settings.speed_min_steps),
            speeds=SpeedMeter(database, alpha=settings.speed_step_weight),
            probation_audits=None if vouch_all(settings) else settings.audit_probation_audits,
        )
        self.certifier = Certifier(
            database,
            self.planner,
            ledger,
            monitor=self.monitor,
            settings=CertifierSettings(
                poll_s=settings.certifier_poll_s,
                backoff_s=settings.certifier_backoff_s,
                backoff_max_s=settings.certifier_backoff_max_s,
                new_tokens=settings.certify_new_tokens,
                allow_private_endpoints=settings.allow_private_endpoints,
                allow_plaintext_nodes=settings.allow_plaintext_nodes,
            ),
        )
        self.auditor = Auditor(
            database,
            key,
            AuditSettings(
                rate=settings.audit_rate,
                probation_rate=settings.audit_probation_rate,
                probation_audits=settings.audit_probation_audits,
                timeout_s=settings.audit_timeout_s,
                timeout_per_position_s=settings.audit_timeout_per_position_s,
                timeout_max_s=settings.audit_timeout_max_s,
                timeouts_to_withdraw=settings.audit_timeouts_to_withdraw,
                auditor_min_audits=settings.auditor_min_audits,
                auditor_min_age_s=settings.auditor_min_age_s,
                allow_private_endpoints=settings.allow_private_endpoints,
                allow_plaintext_nodes=settings.allow_plaintext_nodes,
            ),
            disputes=self.disputes,
            vouched=self.planner.vouched,  # an unreplayable hop serves where routes may
        )
        loans = ArbiterLoans(
            database,
            board,
            self.disputes,
            min_audits=settings.auditor_min_audits,
            min_age_s=settings.auditor_min_age_s,
        )
        self.arbitration = Arbitration(database, self.auditor, self.disputes, loans=loans)
        self.pruner = Pruner(
            database,
            poll_s=settings.prune_interval_s,
            unreachable_after_s=settings.prune_unreachable_after_s,
            dead_after_s=settings.prune_dead_after_s,
        )
        # A node turning reachable may complete a dark recipe's coverage, or be the
        # arbiter a dispute waits for: try both at once.
        self.monitor.on_reachable = self._reachable
        self._running = False

    def _reachable(self, *args: object) -> None:
        self.certifier.wake(*args)
        self.arbitration.wake(*args)

    async def start(self) -> None:
        if not self.settings.background_tasks or self._running:
            return
        await self.monitor.start()
        await self.certifier.start()
        await self.rebalancer.start()
        await self.arbitration.start()
        await self.pruner.start()
        self._running = True
        log.info("reachability dialer, certifier and rebalancer running")

    async def stop(self) -> None:
        await asyncio.to_thread(self.planner.speeds.flush)  # steps timed since the last write
        if not self._running:
            return
        await self.pruner.stop()
        await self.arbitration.stop()
        await self.rebalancer.stop()
        await self.certifier.stop()
        await self.monitor.stop()
        self._running = False

    def hop_latency_ms(self, node_id: str) -> float | None:
        """The dial latency the planner weighs, plus the relay's extra cost per step for a
        node that serves through a relay."""
        measured = self.monitor.latency_ms(node_id)
        if node_id not in self.monitor.relayed:
            return measured
        base = DEFAULT_HOP_LATENCY_MS if measured is None else measured
        return base + self.settings.relay_hop_penalty_ms

    def hop_latencies(self) -> dict[str, float]:
        """:meth:`hop_latency_ms` of every node that has one, in one mapping (a copy):
        what the planner weighs per route request."""
        latencies = self.monitor.latencies()
        penalty = self.settings.relay_hop_penalty_ms
        for node_id in tuple(self.monitor.relayed):  # the event loop may add meanwhile
            latencies[node_id] = latencies.get(node_id, DEFAULT_HOP_LATENCY_MS) + penalty
        return latencies


def lifespan(services: RouteServices) -> Callable[[Any], AbstractAsyncContextManager[None]]:
    """The app lifespan: background tasks run while the app serves."""

    @asynccontextmanager
    async def run(_app: Any) -> AsyncIterator[None]:
        await services.start()
        try:
            yield
        finally:
            await services.stop()

    return run
