"""Prometheus metrics of a relay (on the tracker's registry when embedded)."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge


class RelayMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.links = Counter(
            "meshnet_relay_links",
            "Node link handshakes by outcome (accepted, refused, replaced)",
            ["outcome"],
            registry=self.registry,
        )
        self.streams = Counter(
            "meshnet_relay_streams",
            "Client streams carried, by kind (session or http) and outcome",
            ["kind", "outcome"],
            registry=self.registry,
        )
        self.bytes = Counter(
            "meshnet_relay_bytes",
            "Payload bytes forwarded, by direction (to_node, to_client)",
            ["direction"],
            registry=self.registry,
        )
        self.bad_frames = Counter(
            "meshnet_relay_bad_frames",
            "Frames refused (each ends one stream or one link), by source",
            ["source"],
            registry=self.registry,
        )
        self.throttled = Counter(
            "meshnet_relay_throttled_seconds",
            "Seconds of delay the per-node bandwidth cap imposed",
            registry=self.registry,
        )
        self._connected = Gauge(
            "meshnet_relay_connected_nodes", "Nodes holding a link now", registry=self.registry
        )
        self._open = Gauge(
            "meshnet_relay_open_streams", "Client streams open now", registry=self.registry
        )

    def watch(self, connected: Callable[[], float], open_streams: Callable[[], float]) -> None:
        """Read the gauges from the hub at scrape time (no bookkeeping to drift)."""
        self._connected.set_function(connected)
        self._open.set_function(open_streams)
