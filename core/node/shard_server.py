"""The data plane a node serves its shard on: sessions, the server, its TLS pin.

Start-up builds it on the admitted shard: a session manager under a KV-cache
budget (the owner's, else a share of the memory free now, never unbounded) and
the WebSocket server (core.dataplane.server). Unless the owner chose plaintext,
each start makes a fresh key pair and certificate, so a restart rotates it; the
certificate's pin, signed by the node's identity, goes to the tracker with the
registration that follows, and route clients hold the node to it.

This part owns the server and the sessions and counts what they served; which
endpoint the node advertises (direct, or through a relay) is the lifecycle's
(core.node.lifecycle).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from core.dataplane.server import DataPlaneServer
from core.dataplane.tls import generate_certificate, sign_pin
from core.doctor.checkup import DoctorOutcome
from core.identity.keypair import NodeIdentity
from core.node.settings import NodeSettings
from core.runtime.kv_budget import default_kv_budget_bytes
from core.runtime.sessions import SessionManager

log = logging.getLogger(__name__)


class NodeDataPlane:
    def __init__(
        self,
        settings: NodeSettings,
        identity: NodeIdentity,
        *,
        tracker_public_key: Callable[[], bytes | None],
    ) -> None:
        self._settings = settings
        self._identity = identity
        self._tracker_public_key = tracker_public_key  # the latest registration's
        self.server: DataPlaneServer | None = None
        self.sessions: SessionManager | None = None

    def start(self, outcome: DoctorOutcome) -> None:
        """Serve the loaded shard of ``outcome``: sessions, certificate, server."""
        assert outcome.shard is not None and outcome.identity_block is not None
        settings, identity, shard = self._settings, self._identity, outcome.shard
        budget = settings.kv_budget_bytes or default_kv_budget_bytes(shard.device)
        self.sessions = SessionManager(shard, kv_budget_bytes=budget)
        fingerprint = dict(outcome.identity_block["fingerprint"])
        self.server = DataPlaneServer(
            self.sessions,
            node_id=identity.node_id,
            public_key=identity.public_key_raw,
            sign=identity.sign,
            tracker_public_key=self._tracker_public_key,
            fingerprint=fingerprint,
            shard_range=(shard.start, shard.end),
            max_frame_bytes=settings.max_frame_bytes,
            host=settings.host,
            port=settings.port,
            tokenizer_path=outcome.model_dir / "tokenizer.json",
            tls=None
            if settings.insecure_plaintext_dataplane
            else generate_certificate(identity.node_id),
        )
        self.server.start()

    def direct_endpoint(self) -> str:
        """The URL the server is dialled at directly (``--advertise-host``, else its host)."""
        assert self.server is not None
        host = self._settings.advertise_host or self._settings.host
        return f"{self.server.scheme}://{host}:{self.server.port}"

    def signed_pin(self) -> tuple[str, bytes] | None:
        """The certificate's pin and the identity's signature over it (None: plaintext)."""
        certificate = None if self.server is None else self.server.tls
        if certificate is None:
            return None
        node_id = self._identity.node_id
        return certificate.pin, sign_pin(certificate.pin, node_id, self._identity.sign)

    @property
    def open_sessions(self) -> int:
        return self.sessions.open_count if self.sessions else 0

    @property
    def tokens_served(self) -> int:
        return self.server.tokens_served if self.server else 0

    def load(self) -> float:
        """Reserved share of the KV budget (the open session count without a budget)."""
        if self.sessions is None or not self.sessions.kv_budget_bytes:
            return float(self.open_sessions)
        return self.sessions.reserved_bytes / self.sessions.kv_budget_bytes

    def stop(self, leaving: str | None = None) -> None:
        """Close the server (a failure is logged: shutting down goes on) and the sessions;
        ``leaving``: tell every open session ``node-leaving`` first (its client fails over
        at once)."""
        if self.server is not None:
            try:
                self.server.stop(leaving=leaving)
            except Exception:  # shutting down: log and carry on closing the rest
                log.exception("data plane did not stop cleanly")
            self.server = None
        self.sessions = None
