"""What a node is told to serve, where, and under which limits.

Kept apart from the lifecycle (core.node.lifecycle) so the CLI and the app can build
settings without reading the lifecycle's code; ``public_view`` is what a
snapshot shows of them (never the join token).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.doctor.admission_gate import DEFAULT_MAX_REPORT_AGE_SECONDS


@dataclass(frozen=True)
class NodeSettings:
    tracker_url: str
    model: str | None = None  # model id or folder; None = the default model
    layers: tuple[int, int] | None = None  # None = the largest range that fits
    recipe_id: str | None = None
    device: str | None = None
    host: str = "127.0.0.1"  # where the data plane listens
    port: int = 0
    advertise_host: str | None = None  # what the tracker dials; defaults to host
    kv_budget_bytes: int | None = None
    max_frame_bytes: int = 64 * 1024 * 1024
    join_token: str | None = None
    # The tracker key the node joined (an invite's ``key``): another key is refused.
    tracker_key_fingerprint: str | None = None
    # A private CA's PEM file an https:// tracker's certificate is checked against
    # (core/network/tls_trust.py); None: the operating system's CA store.
    tracker_ca_file: Path | None = None
    memory_cap_mb: int | None = None  # the doctor treats free memory as min(free, cap)
    report_path: Path | None = None  # a fresh saved report to reuse on the first start
    report_max_age_s: float = DEFAULT_MAX_REPORT_AGE_SECONDS  # the gate's freshness limit
    stats_interval_s: float = 5.0
    # Rebalancing hysteresis: serve a range at least this long before moving off it.
    move_dwell_s: float = 600.0
    # A move that closes a hole (or completes a chain to certify) cannot wait ten minutes:
    # the model serves no one meanwhile. The short dwell still stops flapping.
    move_dwell_urgent_s: float = 30.0
    # Serve through a relay from the start (else only once the tracker cannot dial us),
    # and which relay (else the one the tracker offers): core/node/relay.py.
    relay: bool = False
    relay_url: str | None = None
    # Development only: serve ws:// with no TLS and no pin (a tracker admits such a node
    # only with --allow-plaintext-nodes); by default the data plane is wss://, pinned.
    insecure_plaintext_dataplane: bool = False

    def public_view(self) -> dict[str, Any]:
        """The settings a snapshot shows (no join token)."""
        return {
            "tracker_url": self.tracker_url,
            "model": self.model,
            "layers": list(self.layers) if self.layers else None,
            "device": self.device,
            "memory_cap_mb": self.memory_cap_mb,
        }
