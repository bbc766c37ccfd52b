"""Prometheus metrics: counters per app instance, gauges read from the store at scrape."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from fastapi import Request
from prometheus_client import CollectorRegistry, Counter
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from tracker_service.services import views
from tracker_service.services.views import Database


class _StoreCollector(Collector):
    """Live nodes and recipes by status; every replica reports the shared truth."""

    def __init__(self, database: Database) -> None:
        self._db = database

    def collect(self) -> Iterator[Metric]:
        now = time.time()
        live = GaugeMetricFamily("meshnet_tracker_live_nodes", "Nodes inside their live window")
        recipes = GaugeMetricFamily(
            "meshnet_tracker_recipes", "Ledger recipes by status", labels=["status"]
        )
        live_count, by_status = views.gauges(self._db, now=now)
        live.add_metric([], float(live_count))
        for status, count in by_status:
            recipes.add_metric([status], float(count))
        yield live
        yield recipes


class TrackerMetrics:
    def __init__(self, database: Database) -> None:
        self.registry = CollectorRegistry()
        self.registrations = Counter(
            "meshnet_tracker_registrations",
            "Registration attempts by outcome",
            ["outcome"],
            registry=self.registry,
        )
        self.heartbeats = Counter(
            "meshnet_tracker_heartbeats",
            "Heartbeats by outcome",
            ["outcome"],
            registry=self.registry,
        )
        self.heartbeats_ok = self.heartbeats.labels("ok")  # the hot path skips the lookup
        self.auth_refusals = Counter(
            "meshnet_tracker_auth_refusals",
            "Signed requests refused, by reason",
            ["reason"],
            registry=self.registry,
        )
        self.pruned = Counter(
            "meshnet_tracker_pruned",
            "Dead rows pruned (store/pruning.py): registrations, nodes, recipes",
            ["what"],
            registry=self.registry,
        )
        for what in ("registrations", "nodes", "recipes"):
            self.pruned.labels(what)  # shown at 0 before the first pass
        self.api_requests = Counter(
            "meshnet_gateway_api_requests",
            "Gateway requests by the API they came in (openai, openai-responses, anthropic, "
            "ollama), refused ones included",
            ["api"],
            registry=self.registry,
        )
        self.registry.register(_StoreCollector(database))

    def count_pruned(self, what: str, count: int) -> None:
        self.pruned.labels(what).inc(count)


def counted(api: str) -> Callable[[Request], None]:
    """A router dependency counting requests per gateway API (meshnet_gateway_api_requests)."""

    def count(request: Request) -> None:
        request.app.state.tracker.metrics.api_requests.labels(api).inc()

    return count
