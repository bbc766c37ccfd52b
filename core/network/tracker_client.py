"""The node's side of the tracker API: signed register, heartbeat, deregister, and
linking a credit account (the claim's own signatures, core/network/credit_account.py).

Every request is signed with the node key (headers of ``core.identity.signing``). httpx
errors are mapped here, at the boundary, to ``TrackerUnreachable`` (retry with
back-off) or ``TrackerRefused`` (the tracker said no, with its reason code);
a refused heartbeat whose reason is ``re-register`` is ``ReRegisterRequired``.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from core.errors import ReRegisterRequired, TrackerCallFailed, TrackerRefused, TrackerUnreachable
from core.identity.keypair import NodeIdentity
from core.identity.signing import signed_headers
from core.network.credit_account import ACCOUNTS_PATH
from core.network.tls_trust import tracker_verify
from core.network.tracker_key import key_fingerprint_b64

log = logging.getLogger(__name__)

JOIN_TOKEN_HEADER = "X-Meshnet-Join-Token"
REDEEM_PATH = "/api/v1/invites/redeem"
TRACKER_KEY_MISMATCH = "tracker-key-mismatch"
RE_REGISTER = "re-register"
# The tracker's bound on registration's relay_reason (docs/wire.md#registration-and-heartbeat).
RELAY_REASON_MAX = 300


# The tracker's refusal of a capability report that aged out: the seed's code, and the
# one trackers before the seed's codes answered with.
STALE_REASONS = frozenset({"stale", "capability-stale"})


@dataclass(frozen=True)
class Registration:
    node_id: str
    tracker_public_key: str
    heartbeat_interval_s: float
    recipe_status: str
    recipe_detail: str
    session_expires_at: float
    raw: Mapping[str, Any]
    # The oldest report the tracker admits; None from a tracker that does not say.
    capability_max_age_s: float | None = None


@dataclass(frozen=True)
class HeartbeatAck:
    """The tracker's answer to a heartbeat: liveness, and how it sees this node.

    Reachability and recipe status ride on the reply so a node never fetches the
    whole ``/api/v1/state`` to learn them; None where an older tracker omits them.
    """

    heartbeat_interval_s: float
    live_until: float
    reachability: str | None = None  # "reachable" | "unreachable" | "unchecked"
    reachability_reason: str = ""
    recipe_status: str | None = None  # "dark" | "certified"
    recipe_detail: str = ""
    suggested_layers: tuple[int, int] | None = None  # a move the tracker suggests when idle
    suggestion: str = ""
    suggestion_urgent: bool = False  # the model cannot serve until some node moves


class TrackerClient:
    def __init__(
        self,
        base_url: str,
        identity: NodeIdentity,
        *,
        join_token: str | None = None,
        key_fingerprint: str | None = None,
        timeout_s: float = 10.0,
        transport: httpx.BaseTransport | None = None,
        ca_file: str | Path | None = None,
    ) -> None:
        self._identity = identity
        self._join_token = join_token
        # The tracker key an invite named (core/network/invites.py): registration checks it.
        self._key_fingerprint = key_fingerprint
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            timeout=timeout_s,
            transport=transport,
            verify=tracker_verify(ca_file),  # https: the OS's CAs, or --ca-file's
        )

    @property
    def base_url(self) -> str:
        return str(self._http.base_url)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> TrackerClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _post(
        self,
        path: str,
        payload: Mapping[str, Any],
        extra: Mapping[str, str] | None = None,
        nonce: str | None = None,
    ) -> dict[str, Any]:
        body = json.dumps(payload, separators=(",", ":")).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        headers.update(signed_headers("POST", path, body, self._identity, nonce=nonce))
        headers.update(extra or {})
        try:
            response = self._http.post(path, content=body, headers=headers)
        except httpx.HTTPError as exc:
            raise TrackerUnreachable(
                f"cannot reach the tracker at {self.base_url}: {exc}. "
                "Check the tracker URL and your connection."
            ) from exc
        if response.is_success:
            try:
                return dict(response.json())
            except ValueError as exc:
                raise TrackerCallFailed(f"the tracker answered {path} with non-JSON") from exc
        raise _refusal(response)

    def register(
        self,
        identity_block: Mapping[str, Any],
        capability: Mapping[str, Any],
        endpoint: str,
        relay_reason: str | None = None,
        device_class: str | None = None,
        tls_pin: tuple[str, bytes] | None = None,
    ) -> Registration:
        """``relay_reason``: with a relayed endpoint, why (shown on the tracker's status).
        ``device_class``: the class of device the shard runs on (cpu, cuda, mps); the
        tracker holds the report's device to it."""
        extra = {JOIN_TOKEN_HEADER: self._join_token} if self._join_token else None
        body: dict[str, Any] = {
            "public_key": self._identity.public_key_b64,
            "identity": dict(identity_block),
            "capability": dict(capability),
            "endpoint": endpoint,
        }
        if relay_reason:
            body["relay_reason"] = plain_reason(relay_reason)
        if device_class:
            body["device_class"] = device_class
        if tls_pin is not None:  # (pin, signature): docs/wire.md#tls
            body["tls_pin"] = tls_pin[0]
            body["tls_pin_signature"] = base64.b64encode(tls_pin[1]).decode("ascii")
        data = self._post("/api/v1/nodes/register", body, extra)
        self._check_key(str(data.get("tracker_public_key", "")))
        recipe = data.get("recipe") or {}
        session = (data.get("session") or {}).get("credential") or {}
        return Registration(
            node_id=str(data["node_id"]),
            tracker_public_key=str(data["tracker_public_key"]),
            heartbeat_interval_s=float(data["heartbeat_interval_s"]),
            recipe_status=str(recipe.get("status", "unknown")),
            recipe_detail=str(recipe.get("detail", "")),
            session_expires_at=float(session.get("expires_at", 0.0)),
            raw=data,
            capability_max_age_s=_positive_or_none(data.get("capability_max_age_s")),
        )

    def _check_key(self, public_key_b64: str) -> None:
        """Refuse a tracker whose key is not the one this node joined (an invite's pin)."""
        if self._key_fingerprint is None:
            return
        found = key_fingerprint_b64(public_key_b64)
        if found != self._key_fingerprint:
            raise TrackerCallFailed(
                f"the tracker at {self.base_url} answers with key {found or 'none'}, not the key "
                f"{self._key_fingerprint} this node joined; it may not be your network's "
                "tracker. Join again with a fresh invite if the operator changed the key.",
                reason=TRACKER_KEY_MISMATCH,
            )

    def link_credit_account(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Link identities to a credit account: ``body`` carries their own signatures of
        the statement (core/network/credit_account.py); the tracker answers the account."""
        return self._post(ACCOUNTS_PATH, body)

    def network(self, challenge: str) -> dict[str, Any]:
        """What the network says about itself, signed with `challenge` (unsigned GET)."""
        return self._get("/api/v1/network", {"challenge": challenge})

    def redeem_invite(self, code: str, nonce: str) -> dict[str, Any]:
        """Trade an invite code for this identity's join token (a signed request)."""
        body = {"public_key": self._identity.public_key_b64, "code": code}
        return self._post(REDEEM_PATH, body, nonce=nonce)

    def heartbeat(
        self,
        *,
        load: float,
        open_sessions: int,
        tokens_served: int,
        throughput: float | None = None,
    ) -> HeartbeatAck:
        payload: dict[str, Any] = {
            "load": load,
            "open_sessions": open_sessions,
            "tokens_served": tokens_served,
        }
        if throughput is not None:
            payload["throughput"] = throughput
        data = self._post(f"/api/v1/nodes/{self._identity.node_id}/heartbeat", payload)
        reachability = data.get("reachability")
        recipe_status = data.get("recipe_status")
        return HeartbeatAck(
            heartbeat_interval_s=float(data["heartbeat_interval_s"]),
            live_until=float(data["live_until"]),
            reachability=None if reachability is None else str(reachability),
            reachability_reason=str(data.get("reachability_reason") or ""),
            recipe_status=None if recipe_status is None else str(recipe_status),
            recipe_detail=str(data.get("recipe_detail") or ""),
            suggested_layers=_range(data.get("suggested_layers")),
            suggestion=str(data.get("suggestion") or ""),
            suggestion_urgent=data.get("suggestion_urgent") is True,
        )

    def allocation(
        self,
        *,
        model: str,
        layer_count: int,
        max_layers: int,
        speed: float | None = None,
        recipe: str | None = None,
        node_id: str | None = None,
    ) -> dict[str, Any]:
        """The range the tracker suggests for this capacity (``GET /api/v1/allocation``)."""
        params: dict[str, Any] = {
            "model": model,
            "layer_count": layer_count,
            "max_layers": max_layers,
        }
        for name, value in (("speed", speed), ("recipe", recipe), ("node_id", node_id)):
            if value is not None:
                params[name] = value
        return self._get("/api/v1/allocation", params)

    def state(self) -> dict[str, Any]:
        """The tracker's public state (models, recipes, nodes); unsigned."""
        return self._get("/api/v1/state")

    def node_view(self) -> dict[str, Any]:
        """How the tracker lists this node (``GET /api/v1/nodes/{id}``); unsigned."""
        return self._get(f"/api/v1/nodes/{self._identity.node_id}")

    def _get(self, path: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        try:
            response = self._http.get(path, params=params)
        except httpx.HTTPError as exc:
            raise TrackerUnreachable(f"cannot reach the tracker at {self.base_url}: {exc}") from exc
        if not response.is_success:
            raise _refusal(response)
        try:
            return dict(response.json())
        except ValueError as exc:
            raise TrackerCallFailed(f"the tracker answered {path} with non-JSON") from exc

    def deregister(self) -> None:
        self._post(
            f"/api/v1/nodes/{self._identity.node_id}/deregister",
            {"load": 0, "open_sessions": 0, "tokens_served": 0},
        )


def plain_reason(text: str) -> str:
    """One line of printable text within the tracker's bound: the reason may quote the
    tracker's dial error, which can run long."""
    line = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    if len(line) <= RELAY_REASON_MAX:
        return line
    return line[: RELAY_REASON_MAX - 1].rstrip() + "…"


def _range(value: Any) -> tuple[int, int] | None:
    """[start, end) from a reply, or None when absent or malformed (a node survives bad input)."""
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        and 0 <= value[0] < value[1]
    ):
        return int(value[0]), int(value[1])
    return None


def _refusal(response: httpx.Response) -> TrackerRefused:
    reason, detail = f"http-{response.status_code}", response.text[:300]
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        inner = body.get("detail", body)
        if isinstance(inner, dict):
            reason = str(inner.get("reason", reason))
            detail = str(inner.get("detail", detail))
        else:
            reason = str(body.get("reason", reason))
            detail = str(inner)
    kind = ReRegisterRequired if reason == RE_REGISTER else TrackerRefused
    return kind(response.status_code, reason, detail)


def _positive_or_none(value: Any) -> float | None:
    """A positive finite number of seconds from the tracker, or None (absent or nonsense)."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return seconds if 0 < seconds < float("inf") else None
