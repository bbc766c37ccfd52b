"""The node's standing with its tracker: the client, the registration, what the tracker said.

Registering sends the identity block, the admitted report, the endpoint and
the data plane's signed TLS pin; the answer carries the tracker's public key
(the data plane checks route tickets with it), the heartbeat interval, the
recipe's status and the oldest report the tracker admits. That limit is kept
across re-registrations and restarts (None until a tracker said it): the
lifecycle proves the layers again before the report nears it.

This part registers and deregisters when told to and publishes the
registration and recipe gates; when to register, and proving again first when
the tracker found the report stale, are the lifecycle's (core.node.lifecycle).
"""

from __future__ import annotations

import logging

import httpx

from core.doctor.capability import CapabilityReport
from core.doctor.checkup import DoctorOutcome
from core.errors import MeshnetError, TrackerRefused, TrackerUnreachable
from core.events import Gate, GateState
from core.identity.keypair import NodeIdentity, b64decode
from core.network.tracker_client import Registration, TrackerClient
from core.node.hooks import GateFn
from core.node.settings import NodeSettings

log = logging.getLogger(__name__)


class TrackerRegistration:
    def __init__(
        self,
        settings: NodeSettings,
        identity: NodeIdentity,
        *,
        gate: GateFn,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._settings = settings
        self._identity = identity
        self._gate = gate
        self._transport = transport  # tests: httpx.MockTransport for tracker error paths
        self.client: TrackerClient | None = None  # from start-up to teardown
        self.registration: Registration | None = None
        self.tracker_key: bytes | None = None
        # The tracker's report age limit from its last registration answer.
        self.max_age_s: float | None = None

    def new_client(self) -> TrackerClient:
        """A client of this node's tracker (start-up's, and placement's for one question)."""
        settings = self._settings
        return TrackerClient(
            settings.tracker_url,
            self._identity,
            join_token=settings.join_token,
            key_fingerprint=settings.tracker_key_fingerprint,
            transport=self._transport,
            ca_file=settings.tracker_ca_file,
        )

    def connect(self) -> None:
        self.client = self.new_client()

    def register(
        self,
        outcome: DoctorOutcome,
        report: CapabilityReport,
        *,
        endpoint: str,
        relay_reason: str | None,
        tls_pin: tuple[str, bytes] | None,
    ) -> None:
        """Register the loaded shard with ``report``; publish the registration and recipe."""
        assert self.client is not None
        block = outcome.identity_block
        assert block is not None
        try:
            registration = self.client.register(
                block,
                report.to_dict(),
                endpoint,
                relay_reason,
                # What the shard runs on now, never read from the report it is checked against.
                device_class=outcome.shard.device.type if outcome.shard else None,
                tls_pin=tls_pin,
            )
        except (TrackerRefused, TrackerUnreachable) as exc:
            self._gate(Gate.REGISTRATION, GateState.FAILED, str(exc), exc.reason)
            raise
        self.tracker_key = b64decode(registration.tracker_public_key)
        self.registration = registration
        if registration.capability_max_age_s is not None:
            self.max_age_s = registration.capability_max_age_s
        fingerprint = block["fingerprint"]
        self._gate(
            Gate.REGISTRATION,
            GateState.PASSED,
            f"registered as {registration.node_id}",
            node_id=registration.node_id,
            tracker_url=self._settings.tracker_url,
            endpoint=endpoint,
            model_id=outcome.manifest.model_id,
            shard=[report.shard.start, report.shard.end],
            recipe_id=report.recipe.recipe_id,
            recipe_version=report.recipe.recipe_version,
            model_artifact_digest=fingerprint["model_artifact_digest"],
            runtime_recipe_digest=fingerprint["runtime_recipe_digest"],
        )
        status = registration.recipe_status
        self._gate(
            Gate.RECIPE,
            GateState.PASSED if status == "certified" else GateState.INFO,
            f"recipe is {status}: {registration.recipe_detail}",
            status,
            status=status,
            detail=registration.recipe_detail,
        )

    def deregister(self) -> None:
        """Leave routing (a failure is only logged: the tracker's live window ends it)."""
        if self.client is not None and self.registration is not None:
            try:
                self.client.deregister()
            except MeshnetError as exc:
                log.info("deregister failed", extra={"error": str(exc)})
        self.registration = None

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
