"""Test doubles of a node: real Ed25519 keys (from `cryptography`), signed requests,
identity blocks and capability reports. Tracker tests never import core."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tracker_service.domain.recipe_digests import RECIPE_AXES, recipe_digest

LAYERS = 30
CONTENT = hashlib.sha256(b"smollm2-135m weights").hexdigest()
OTHER_CONTENT = hashlib.sha256(b"other weights").hexdigest()
ARCH = hashlib.sha256(b"llama config").hexdigest()


def recipe_axes(**overrides: Any) -> dict[str, Any]:
    axes: dict[str, Any] = {
        "weight_quantization": "none",
        "activation_dtype": "float32",
        "compute_dtype": "float32",
        "kv_dtype": "float32",
        "kv_layout": "bhsd",
        "tokenizer_revision": hashlib.sha256(b"tokenizer.json").hexdigest(),
        "architecture_adapter": "llama",
        "backend_id": "torch-cpu",
        "runtime_version": "0.1.0",
        "boundary_schema_version": 1,
        "protocol_schema_version": 1,
        "recipe_id": "smollm2-135m-fp32",
        "recipe_version": "1",
        "catalogue_version": "2026.11",
    }
    axes.update(overrides)
    return axes


def identity_block(start: int = 0, end: int = LAYERS, **recipe: Any) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "artifact": {
            "artifact_id": "HuggingFaceTB/SmolLM2-135M-Instruct",
            "revision": "12fd25f77366fa6b3b4b768ec3050bf629380bac",
            "content_digest": CONTENT,
            "layer_count": LAYERS,
            "architecture": "LlamaForCausalLM",
            "architecture_digest": ARCH,
            "derived_from": None,
        },
        "recipe": recipe_axes(**recipe),
        "shard_start": start,
        "shard_end": end,
    }


def _recipe_digest(recipe: dict[str, Any]) -> str:
    """What the node's doctor reports: the digest of the axes it ran (derived here)."""
    return recipe_digest({axis: recipe[axis] for axis in RECIPE_AXES})


def capability(identity: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    """A passing report for `identity` (for a malformed block: for the default one)."""
    try:
        return _capability(identity, **overrides)
    except (KeyError, TypeError, ValueError):
        return _capability(identity_block(), **overrides)


def _capability(identity: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    report: dict[str, Any] = {
        "model": {
            "model_id": identity["artifact"]["artifact_id"],
            "content_digest": identity["artifact"]["content_digest"],
        },
        "shard": {"start": identity["shard_start"], "end": identity["shard_end"]},
        "recipe": {
            "recipe_id": identity["recipe"]["recipe_id"],
            "recipe_version": identity["recipe"]["recipe_version"],
            "runtime_recipe_digest": _recipe_digest(identity["recipe"]),
        },
        "backend": {"backend_id": identity["recipe"]["backend_id"], "device": "cpu"},
        "status": "passed",
        "passed": True,
        "diagnostics": [],
        "validated_at": time.time(),
        "tokens_per_second": 42.5,
        "wall_time_s": 1.25,
    }
    report.update(overrides)
    return report


@dataclass
class FakeNode:
    """A node's key and what it signs; the signing is written here, from docs/wire.md."""

    key: Ed25519PrivateKey = field(default_factory=Ed25519PrivateKey.generate)
    endpoint: str = "ws://127.0.0.1:9001"
    relay_reason: str | None = None  # sent at registration when set (a relayed node's why)
    device_class: str = "cpu"  # the class advertised at registration (the report's: "cpu")
    # (pin, base64 signature) sent at registration when set (docs/wire.md#tls).
    tls_pin: tuple[str, str] | None = None

    @property
    def public_raw(self) -> bytes:
        return self.key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )

    @property
    def public_b64(self) -> str:
        return base64.b64encode(self.public_raw).decode()

    @property
    def node_id(self) -> str:
        return hashlib.sha256(self.public_raw).hexdigest()[:32]

    def headers(
        self,
        method: str,
        path: str,
        body: bytes,
        *,
        timestamp: int | None = None,
        nonce: str | None = None,
    ) -> dict[str, str]:
        ts = str(int(time.time()) if timestamp is None else timestamp)
        nonce = nonce or os.urandom(16).hex()
        message = f"{method}\n{path}\n{ts}\n{nonce}\n{hashlib.sha256(body).hexdigest()}"
        signature = base64.b64encode(self.key.sign(message.encode())).decode()
        return {
            "X-Meshnet-Node": self.node_id,
            "X-Meshnet-Timestamp": ts,
            "X-Meshnet-Nonce": nonce,
            "X-Meshnet-Signature": signature,
            "Content-Type": "application/json",
        }

    def register_body(self, identity: dict[str, Any] | None = None, **cap_overrides: Any) -> bytes:
        identity = copy.deepcopy(identity or identity_block())
        drop = bool(cap_overrides.pop("drop_capability", False))
        payload: dict[str, Any] = {
            "public_key": self.public_b64,
            "identity": identity,
            "capability": capability(identity, **cap_overrides),
            "endpoint": self.endpoint,
            "device_class": self.device_class,
        }
        if drop:
            del payload["capability"]
        if self.relay_reason is not None:
            payload["relay_reason"] = self.relay_reason
        if self.tls_pin is not None:
            payload["tls_pin"], payload["tls_pin_signature"] = self.tls_pin
        return json.dumps(payload).encode()


def heartbeat_body(**overrides: Any) -> bytes:
    beat: dict[str, Any] = {"load": 0.25, "open_sessions": 1, "tokens_served": 10}
    beat.update(overrides)
    return json.dumps(beat).encode()
