"""Tracker settings, read from the environment (prefix ``MESHNET_TRACKER_``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

MIB = 1024 * 1024


def default_data_dir() -> Path:
    """``$MESHNET_HOME/tracker`` when set (tests, the demo), else the user data folder."""
    home = os.environ.get("MESHNET_HOME")
    base = Path(home) if home else Path(platformdirs.user_data_dir("meshnet", "MeshNet"))
    return base / "tracker"


def default_max_concurrent() -> int:
    """Generations under way at once by default: 32 per CPU core, at least 64. Each
    holds route sessions and the gateway's sampling work; 0 (no gate) let one key
    hold hundreds of sessions open."""
    return max(64, 32 * (os.cpu_count() or 1))


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MESHNET_TRACKER_", extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    data_dir: Path = Field(default_factory=default_data_dir)
    # SQLAlchemy URL; empty means SQLite (WAL) at data_dir/tracker.db.
    db: str = ""
    # Base64 of a 32-byte Ed25519 seed; empty means data_dir/tracker_key (0600).
    signing_key: str = ""
    # Admin actions (remove, ban, revoke) need this bearer token; empty disables them.
    admin_token: str = ""
    # A private network admits only nodes holding a join token (`meshnet-tracker tokens add`).
    private: bool = False
    # Dial node endpoints on loopback/private/link-local addresses (demo, tests, LAN);
    # off on a public tracker, which dials only public addresses (endpoint_policy.py).
    allow_private_endpoints: bool = False
    # Admit and route through nodes serving plaintext ws:// without a TLS pin
    # (development only; docs/wire.md#tls). Off: every direct node is wss:// and pinned.
    allow_plaintext_nodes: bool = False
    # Doors that need no account, limited per client address (address_limits.py).
    route_requests_per_minute_per_address: int = Field(default=120, ge=1)
    registrations_per_minute_per_address: int = Field(default=30, ge=1)
    # An address past this many failed authentications a minute gets 429 (auth_throttle.py).
    failed_auth_per_minute_per_address: int = Field(default=60, ge=1)
    # Live nodes that may name one host as their endpoint, or register from it through a
    # relay (store/node_caps.py); the embedded relay's links per address too.
    max_nodes_per_address: int = Field(default=64, ge=1)

    # HTTPS served directly (`serve --tls-cert/--tls-key`, cli/hosting.py): PEM files.
    tls_cert: str = ""
    tls_key: str = ""
    # Reverse proxies whose X-Forwarded-For/-Proto headers uvicorn believes (comma-separated
    # addresses or networks); from any other peer the headers are ignored.
    forwarded_allow_ips: str = "127.0.0.1"

    # The URL nodes and people reach this tracker at (https://tracker.example.org), which
    # invites carry; empty means http://host:port as served. Behind a proxy, set it.
    public_url: str = ""
    # What this network is, shown to people before they join (GET /api/v1/network, the
    # invite page /join/<code>). Set with `serve --network-name ...` or these settings.
    network_name: str = Field(default="A MeshNet network", max_length=120)
    network_description: str = Field(default="", max_length=2000)
    network_operator: str = Field(default="", max_length=200)
    network_contact: str = Field(default="", max_length=300)
    network_terms_url: str = Field(default="", max_length=500)

    heartbeat_interval_s: float = Field(default=10.0, gt=0)
    # Nodes silent this many intervals leave routing and must re-register.
    missed_heartbeats: int = Field(default=3, ge=1)
    session_ttl_s: float = Field(default=900.0, gt=0)
    # Signed requests outside now ± this window are stale; nonces are kept this long.
    timestamp_window_s: int = Field(default=300, ge=1)
    # A capability report older than this is refused (the seed's 900 s unless the
    # operator sets another limit); one more than 60 s in the future always is.
    capability_max_age_s: float = Field(default=900.0, gt=0)
    max_body_bytes: int = Field(default=MIB, ge=1024)
    log_level: str = "info"
    # The status page (GET /) fetches /api/v1/state this often to redraw itself.
    status_refresh_s: float = Field(default=5.0, ge=1, le=3600)

    # Data plane: dial nodes, form routes, certify recipes (tracker_service/services/data_plane.py).
    # Off only for tests that want the registry without background dialling.
    background_tasks: bool = True
    # Never-dialled nodes are dialled within this poll; reachable ones re-checked every
    # recheck_s, unreachable ones every retry_s.
    reachability_poll_s: float = Field(default=0.5, gt=0)
    reachability_recheck_s: float = Field(default=60.0, gt=0)
    reachability_retry_s: float = Field(default=10.0, gt=0)
    reachability_timeout_s: float = Field(default=3.0, gt=0)
    route_ticket_ttl_s: float = Field(default=600.0, gt=0)
    certifier_poll_s: float = Field(default=5.0, gt=0)
    # A failed certification is retried after this, doubling up to the max.
    certifier_backoff_s: float = Field(default=5.0, gt=0)
    certifier_backoff_max_s: float = Field(default=300.0, gt=0)
    certify_new_tokens: int = Field(default=4, ge=1, le=64)
    # Rebalancing (tracker_service/services/rebalancing.py): how often moves are planned, the
    # bottleneck gain a move must bring, and how long a moving node counts at its target.
    rebalance_poll_s: float = Field(default=30.0, gt=0)
    rebalance_margin: float = Field(default=0.2, ge=0)
    rebalance_grace_s: float = Field(default=300.0, gt=0)
    # Hop audits (tracker_service/services/hop_audit.py): the fraction of route steps re-asked of
    # another node; higher for an identity that has passed fewer than
    # audit_probation_audits audits. 0 turns audits off.
    audit_rate: float = Field(default=0.02, ge=0, le=1)
    audit_probation_rate: float = Field(default=0.25, ge=0, le=1)
    audit_probation_audits: int = Field(default=20, ge=0)
    # A range no second node holds cannot be audited: it serves users only through a
    # node that left probation (docs/trust.md#no-hop-beyond-audit). `serve
    # --trust-lone-ranges` (a private network: you run every node) serves it anyway.
    trust_lone_ranges: bool = False

    # The OpenAI-compatible gateway (/v1/*): per-key limits unless a key sets its own.
    gateway_requests_per_minute: int = Field(default=60, ge=1)
    gateway_tokens_per_minute: int = Field(default=200_000, ge=1)
    # A hop silent this long in one step counts as dead: the gateway fails over.
    gateway_step_timeout_s: float = Field(default=30.0, gt=0)
    gateway_open_timeout_s: float = Field(default=15.0, gt=0)
    gateway_max_failovers: int = Field(default=4, ge=0)
    # Greedy answers verify prompt-lookup drafts, several tokens a round trip
    # (gateway/drafting.py): "auto" while such steps serve a route's tokens faster than
    # plain ones (measured per answer), "on" always, "off" never (one token a step).
    gateway_speculative_decoding: Literal["auto", "on", "off"] = "auto"
    # Routes run as chains where their tickets offer one (every hop passes its output
    # straight to the next, docs/wire.md#chained-hops): "auto"; "off" runs every route
    # as a star (the gateway carries each hop's output to the next).
    gateway_chained_hops: Literal["auto", "off"] = "auto"
    # Generations under way at once; past it requests queue, credited keys first and
    # free ones every gateway_free_share-th slot (gateway/priority.py). 0: no limit;
    # the default scales with the machine (default_max_concurrent).
    gateway_max_concurrent: int = Field(default_factory=default_max_concurrent, ge=0)
    gateway_free_share: int = Field(default=4, ge=1)
    # max_tokens when a chat request names none (capped by the model's context);
    # /v1/completions defaults to 16, as OpenAI's legacy completions API.
    gateway_default_max_tokens: int = Field(default=512, ge=1)

    # Relays (tracker_service/relay/): a node the tracker cannot dial serves through one.
    # Listed relays (comma-separated ws://host:port/relay of `meshnet-tracker relay`
    # processes) are offered to nodes; with none listed the tracker's own is.
    relay_urls: str = ""
    embedded_relay: bool = True
    # The embedded relay's cap on each node's traffic, bytes/s both ways (0: none);
    # 100 Mbit/s, as a `meshnet-tracker relay` process defaults to.
    relay_node_bytes_per_s: float = Field(default=100 * 1024 * 1024 / 8, ge=0)
    # What the route planner adds to a relayed hop's measured latency: the relay's two
    # extra socket hops on every step, which a one-off dial round trip undercounts.
    relay_hop_penalty_ms: float = Field(default=2.0, ge=0)
    # Measured speed (docs/architecture.md#measured-speed): the weight of one timed
    # decode step in a node's moving mean, and the steps before a node counts as
    # measured (until then it is costed at the network's median; its own claim only
    # ever lowers the estimate).
    speed_step_weight: float = Field(default=0.1, gt=0, le=1)
    speed_min_steps: int = Field(default=4, ge=1)
    # Model sources (store/model_sources.py): the gateway serves a model name only from
    # weights (artifact digests) the operator allowed. `serve --allow-model-source
    # NAME=DIGEST` (comma-separated here) allows them at start; `serve
    # --trust-first-model-source` (a private network: you run every node) allows the first
    # source certified under each name by itself.
    allowed_model_sources: str = ""
    trust_first_model_source: bool = False

    # Limits that hold under abuse (docs/operators.md#limits). A grammar (response_format
    # json_schema, forced tools) still compiling after this long is refused 400
    # schema_too_complex; compiles run off the event loop (gateway/constraint.py).
    gateway_grammar_budget_s: float = Field(default=2.0, gt=0)
    # Route sessions one API key may hold open at once (each choice of n is one);
    # past it a request is refused 429 too_many_sessions. 0: no cap.
    gateway_max_sessions_per_key: int = Field(default=16, ge=0)
    # Pruning (store/pruning.py), every prune_interval_s: a registration never reachable
    # and silent for prune_unreachable_after_s, any node silent for prune_dead_after_s,
    # and dark recipes nothing refers to, first seen that long ago.
    prune_interval_s: float = Field(default=600.0, gt=0)
    prune_unreachable_after_s: float = Field(default=3600.0, gt=0)
    prune_dead_after_s: float = Field(default=7 * 86400.0, gt=0)

    # Auditors and arbiters (issue 35, services/hop_audit.py): a third opinion or an
    # arbiter, whose word convicts, is an established node (this many audits passed,
    # registered this long ago) sharing no account, /24 or /64, or invite with a party.
    auditor_min_audits: int = Field(default=5, ge=0)
    auditor_min_age_s: float = Field(default=3600.0, ge=0)
    # An audit's budget: audit_timeout_s plus this per position of the session, at most
    # audit_timeout_max_s. A node whose audits time out this many times in a row
    # leaves user routes.
    audit_timeout_s: float = Field(default=10.0, gt=0)
    audit_timeout_per_position_s: float = Field(default=0.05, ge=0)
    audit_timeout_max_s: float = Field(default=300.0, gt=0)
    audit_timeouts_to_withdraw: int = Field(default=3, ge=1)
    # The Responses API's previous_response_id (gateway/faces/response_store.py): how long
    # a stored response is kept, and how many each key keeps (0: none are stored).
    gateway_response_ttl_s: float = Field(default=3600.0, gt=0)
    gateway_responses_per_key: int = Field(default=256, ge=0)
    # A second port answering only Ollama's paths (serve --ollama-port; 0 or none: off)
    ollama_port: int | None = Field(default=None, ge=0, le=65535)
    # Credit accounts one identity, and one address group (IPv6 /64), may create per
    # day (docs/credits.md#accounts-and-teams): the app makes one per computer.
    credit_accounts_per_identity_per_day: int = Field(default=3, ge=1)
    credit_accounts_per_address_per_day: int = Field(default=20, ge=1)

    @field_validator("network_terms_url", "public_url")
    @classmethod
    def _web_address(cls, value: str) -> str:
        # Shown as a link on the invite page: only a web address, never javascript: etc.
        if value and not value.startswith(("https://", "http://")):
            raise ValueError("give an http(s):// address, or leave it empty")
        return value

    def database_url(self) -> str:
        if self.db:
            return self.db
        return f"sqlite:///{self.data_dir / 'tracker.db'}"

    def own_url(self) -> str:
        """The URL invites name: the public one when set, else where this tracker listens."""
        if self.public_url:
            return self.public_url.rstrip("/")
        host = f"[{self.host}]" if ":" in self.host else self.host
        scheme = "https" if self.tls_cert else "http"
        return f"{scheme}://{host}:{self.port}"

    def key_path(self) -> Path:
        return self.data_dir / "tracker_key"

    @property
    def live_window_s(self) -> float:
        return self.heartbeat_interval_s * self.missed_heartbeats
