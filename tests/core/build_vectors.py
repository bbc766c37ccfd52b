"""Build the committed conformance vectors the tracker must reproduce.

    python -m tests.core.build_vectors     # rewrites tests/data/*_vectors.json

Every input is fixed (key seeds, timestamps, nonces, digests), so the output is
byte-stable; tests check that the committed files equal a fresh build and that
each vector re-derives from its own inputs.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from pathlib import Path
from typing import Any

from core.identity.keypair import NodeIdentity
from core.identity.signing import (
    canonical_json,
    canonical_sha256,
    sha256_hex,
    signed_headers,
    signed_request_message,
)
from core.recipes.recipe_identity import (
    ARTIFACT_DIGEST_DOMAIN,
    RECIPE_DIGEST_DOMAIN,
    SHARD_BINDING_DIGEST_DOMAIN,
    DerivedFrom,
    build_identity_block,
    parse_identity,
)
from tests.core.build_admission_vectors import ADMISSION_VECTORS, build_admission_vectors

DATA_DIR = Path(__file__).resolve().parents[1] / "data"
SIGNED_REQUEST_VECTORS = DATA_DIR / "signed_request_vectors.json"
RECIPE_VECTORS = DATA_DIR / "recipe_fingerprint_vectors.json"


def _seed(label: str) -> bytes:
    return hashlib.sha256(label.encode("utf-8")).digest()


def _hex(label: str) -> str:
    return hashlib.sha256(label.encode("utf-8")).hexdigest()


# -- signed requests -----------------------------------------------------------

_REQUESTS: list[dict[str, Any]] = [
    {
        "name": "register-ascii-json",
        "seed": "meshnet-vector-node-1",
        "method": "POST",
        "path": "/v1/nodes/register",
        "timestamp": 1767225600,
        "nonce": "00112233445566778899aabbccddeeff",
        "body": canonical_json(
            {"endpoint": "ws://10.0.0.7:7070", "shard_start": 0, "shard_end": 30}
        ),
    },
    {
        "name": "heartbeat-empty-body",
        "seed": "meshnet-vector-node-2",
        "method": "POST",
        "path": "/v1/nodes/heartbeat",
        "timestamp": 1767225660,
        "nonce": "ffeeddccbbaa99887766554433221100",
        "body": b"",
    },
    {
        "name": "non-ascii-json-body",
        "seed": "meshnet-vector-node-3",
        "method": "PUT",
        "path": "/v1/nodes/profile",
        "timestamp": 1767229200,
        "nonce": "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718",
        "body": canonical_json({"display_name": "Łódź-节点 🚀", "note": "naïve café"}),
    },
    {
        "name": "get-without-body",
        "seed": "meshnet-vector-node-1",
        "method": "GET",
        "path": "/v1/jobs/lease",
        "timestamp": 1767232800,
        "nonce": "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
        "body": b"",
    },
]


def build_signed_request_vectors() -> dict[str, Any]:
    vectors = []
    for spec in _REQUESTS:
        seed = _seed(spec["seed"])
        identity = NodeIdentity.from_seed(seed)
        headers = signed_headers(
            spec["method"],
            spec["path"],
            spec["body"],
            identity,
            now=spec["timestamp"],
            nonce=spec["nonce"],
        )
        message = signed_request_message(
            spec["method"], spec["path"], spec["timestamp"], spec["nonce"], spec["body"]
        )
        vectors.append(
            {
                "name": spec["name"],
                "private_key_seed_hex": seed.hex(),
                "public_key_b64": identity.public_key_b64,
                "node_id": identity.node_id,
                "method": spec["method"],
                "path": spec["path"],
                "timestamp": spec["timestamp"],
                "nonce": spec["nonce"],
                "body_b64": base64.b64encode(spec["body"]).decode("ascii"),
                "body_sha256": sha256_hex(spec["body"]),
                "canonical": message.decode("utf-8"),
                "signature_b64": headers["X-Meshnet-Signature"],
            }
        )
    return {
        "description": (
            "Signed node->tracker HTTP requests (docs/wire.md#signed-requests). "
            "Ed25519 over the UTF-8 of "
            "METHOD\\nPATH\\nTIMESTAMP\\nNONCE\\nsha256_hex(body); headers X-Meshnet-Node, "
            "X-Meshnet-Timestamp, X-Meshnet-Nonce, X-Meshnet-Signature. Node id = first 32 hex "
            "of sha256(raw public key). Written by tests/core/build_vectors.py."
        ),
        "vectors": vectors,
    }


# -- recipe identity -------------------------------------------------------------

_AXES_FP32: dict[str, Any] = {
    "weight_quantization": "none",
    "activation_dtype": "float32",
    "compute_dtype": "float32",
    "kv_dtype": "float32",
    "kv_layout": "contiguous-bhsd",
    "tokenizer_revision": _hex("vector tokenizer.json"),
    "architecture_adapter": "meshnet.llama.v1",
    "backend_id": "meshnet-torch",
    "runtime_version": "0.1.0",
    "boundary_schema_version": 1,
    "protocol_schema_version": 1,
    "recipe_id": "llama-fp32",
    "recipe_version": "1",
    "catalogue_version": "1",
}
_AXES_BF16 = {
    **_AXES_FP32,
    "activation_dtype": "bfloat16",
    "compute_dtype": "bfloat16",
    "kv_dtype": "bfloat16",
    "recipe_id": "llama-bf16",
}
_AXES_INT8 = {
    **_AXES_FP32,
    "weight_quantization": "int8-per-channel",
    "recipe_id": "llama-int8",
}
_AXES_Q4 = {
    **_AXES_FP32,
    "weight_quantization": "int4-g32-int8-head",
    "recipe_id": "llama-q4",
}
_ARTIFACT: dict[str, Any] = {
    "artifact_id": "smollm2-135m-instruct",
    "revision": "gguf-q8_0-" + _hex("vector revision")[:12],
    "content_digest": _hex("vector content"),
    "architecture": "LlamaForCausalLM",
    "architecture_digest": _hex("vector config.json"),
    "layer_count": 30,
}


# One vector per family the runtime computes: its catalogue fp32 recipe (the adapter
# axis names the family) on an artifact whose architecture digest is the canonical
# SHA-256 of a config.json carrying the fields only that family has. Those fields
# (windows, soft-caps, q/k norms, experts) are hashed through the config digest, so a
# family adds no recipe axis of its own: the adapter axis plus the config cover it.
_FAMILY_CONFIGS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "llama3_2": (
        "llama",
        "LlamaForCausalLM",
        {
            "tie_word_embeddings": True,
            "rope_parameters": {"rope_type": "llama3", "factor": 32.0, "rope_theta": 500000.0},
        },
    ),
    "mistral-sliding": ("llama", "MistralForCausalLM", {"sliding_window": 4096}),
    "qwen2": ("qwen2", "Qwen2ForCausalLM", {"use_sliding_window": False}),
    "qwen3": ("qwen3", "Qwen3ForCausalLM", {"head_dim": 128}),
    "phi3": ("phi3", "Phi3ForCausalLM", {"sliding_window": 2047}),
    "gemma2": (
        "gemma2",
        "Gemma2ForCausalLM",
        {"attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0, "sliding_window": 4096},
    ),
    "gemma3": (
        "gemma3",
        "Gemma3ForCausalLM",
        {"sliding_window": 512, "query_pre_attn_scalar": 256},
    ),
    "mixtral": (
        "mixtral",
        "MixtralForCausalLM",
        {"num_local_experts": 8, "num_experts_per_tok": 2},
    ),
    "qwen3-moe": (
        "qwen3_moe",
        "Qwen3MoeForCausalLM",
        {"num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768},
    ),
}


def _family_vectors() -> list[tuple[str, dict[str, Any]]]:
    vectors = []
    for name, (family, arch_class, fields) in _FAMILY_CONFIGS.items():
        recipe_family = "qwen3-moe" if family == "qwen3_moe" else family
        recipe = {
            **_AXES_FP32,
            "architecture_adapter": f"meshnet.{family}.v1",
            "recipe_id": f"{recipe_family}-fp32",
        }
        config = {"architectures": [arch_class], "num_hidden_layers": 30, **fields}
        block = _block(
            recipe=recipe,
            start=0,
            end=30,
            artifact_id=f"vector-{name}",
            architecture=arch_class,
            architecture_digest=canonical_sha256(config),
        )
        vectors.append((f"family-{name}-fp32", block))
    return vectors


def _block(
    *,
    recipe: dict[str, Any],
    start: int,
    end: int,
    derived: DerivedFrom | None = None,
    **artifact: Any,
) -> dict[str, Any]:
    fields = {**_ARTIFACT, **artifact}
    return build_identity_block(
        recipe_fields=recipe, shard_start=start, shard_end=end, derived_from=derived, **fields
    )


def _expected(block: dict[str, Any]) -> dict[str, str]:
    parsed = parse_identity(block)
    return {
        "model_artifact_digest": parsed.model_artifact_digest,
        "runtime_recipe_digest": parsed.runtime_recipe_digest,
        "shard_binding_digest": parsed.shard_binding_digest,
    }


def _valid_vectors() -> list[tuple[str, dict[str, Any]]]:
    no_claim = _block(recipe=_AXES_FP32, start=0, end=15)
    del no_claim["fingerprint"]
    split = DerivedFrom(
        source_artifact_digest=_ARTIFACT["content_digest"], shard_start=10, shard_end=30
    )
    return [
        ("whole-model-fp32", _block(recipe=_AXES_FP32, start=0, end=30)),
        ("middle-shard-bf16", _block(recipe=_AXES_BF16, start=10, end=20)),
        (
            "derived-split-last-shard",
            _block(
                recipe=_AXES_FP32,
                start=12,
                end=30,
                derived=split,
                content_digest=_hex("vector split content 10-30"),
            ),
        ),
        ("no-fingerprint-claim", no_claim),
        (
            "non-ascii-artifact-id",
            _block(recipe=_AXES_FP32, start=0, end=30, artifact_id="modèle-测试-ü"),
        ),
        # same artifact and axes as whole-model-fp32 but int8 weights: another recipe digest
        ("whole-model-int8-weights", _block(recipe=_AXES_INT8, start=0, end=30)),
        # and 4-bit weights: a third recipe digest for the same artifact
        ("whole-model-q4-weights", _block(recipe=_AXES_Q4, start=0, end=30)),
        *_family_vectors(),
    ]


def _edit(block: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    """A copy of ``block`` with one field set (``...`` as value deletes it)."""
    doc = copy.deepcopy(block)
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value is ...:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc


def _rejections(base: dict[str, Any], split: dict[str, Any]) -> list[tuple[str, Any, str]]:
    bad = "RecipeIdentityError"
    hex_a = _hex("another digest")
    return [
        ("identity-not-an-object", [base], bad),
        ("schema-version-2", _edit(base, ("schema_version",), 2), bad),
        ("schema-version-missing", _edit(base, ("schema_version",), ...), bad),
        ("artifact-not-an-object", _edit(base, ("artifact",), "smollm2"), bad),
        ("recipe-not-an-object", _edit(base, ("recipe",), None), bad),
        ("layer-count-zero", _edit(base, ("artifact", "layer_count"), 0), bad),
        ("layer-count-bool", _edit(base, ("artifact", "layer_count"), True), bad),
        ("layer-count-string", _edit(base, ("artifact", "layer_count"), "30"), bad),
        (
            "content-digest-uppercase",
            _edit(base, ("artifact", "content_digest"), _ARTIFACT["content_digest"].upper()),
            bad,
        ),
        ("content-digest-short", _edit(base, ("artifact", "content_digest"), "abc123"), bad),
        ("derived-from-not-an-object", _edit(split, ("artifact", "derived_from"), "source"), bad),
        (
            "derived-from-source-not-hex",
            _edit(split, ("artifact", "derived_from", "source_artifact_digest"), "sha256:xyz"),
            bad,
        ),
        (
            "derived-from-start-negative",
            _edit(split, ("artifact", "derived_from", "shard_start"), -1),
            bad,
        ),
        (
            "derived-from-end-missing",
            _edit(split, ("artifact", "derived_from", "shard_end"), ...),
            bad,
        ),
        (
            "derived-from-empty-range",
            _edit(
                _edit(split, ("artifact", "derived_from", "shard_start"), 30),
                ("artifact", "derived_from", "shard_end"),
                30,
            ),
            bad,
        ),
        (
            "derived-from-past-layer-count",
            _edit(split, ("artifact", "derived_from", "shard_end"), 31),
            bad,
        ),
        (
            "derived-from-own-content",
            _edit(
                split,
                ("artifact", "derived_from", "source_artifact_digest"),
                split["artifact"]["content_digest"],
            ),
            bad,
        ),
        ("shard-start-negative", _edit(base, ("shard_start",), -1), bad),
        ("shard-end-float", _edit(base, ("shard_end",), 30.0), bad),
        ("shard-empty", _edit(_edit(base, ("shard_start",), 5), ("shard_end",), 5), bad),
        ("shard-past-layer-count", _edit(base, ("shard_end",), 31), bad),
        ("shard-outside-split", _edit(split, ("shard_start",), 5), bad),
        ("recipe-axis-missing", _edit(base, ("recipe", "kv_layout"), ...), bad),
        ("recipe-int-axis-zero", _edit(base, ("recipe", "boundary_schema_version"), 0), bad),
        ("recipe-int-axis-string", _edit(base, ("recipe", "protocol_schema_version"), "1"), bad),
        ("recipe-text-axis-blank", _edit(base, ("recipe", "compute_dtype"), "   "), bad),
        ("recipe-text-axis-number", _edit(base, ("recipe", "runtime_version"), 1), bad),
        ("tokenizer-revision-moving", _edit(base, ("recipe", "tokenizer_revision"), "main"), bad),
        (
            "tokenizer-revision-ref",
            _edit(base, ("recipe", "tokenizer_revision"), "refs/heads/v2"),
            bad,
        ),
        ("artifact-id-empty", _edit(base, ("artifact", "artifact_id"), ""), bad),
        ("revision-moving", _edit(base, ("artifact", "revision"), "Latest"), bad),
        ("architecture-missing", _edit(base, ("artifact", "architecture"), ...), bad),
        (
            "architecture-digest-not-hex",
            _edit(base, ("artifact", "architecture_digest"), "z" * 64),
            bad,
        ),
        ("recipe-id-missing", _edit(base, ("recipe", "recipe_id"), ...), bad),
        ("recipe-version-number", _edit(base, ("recipe", "recipe_version"), 1), bad),
        ("catalogue-version-empty", _edit(base, ("recipe", "catalogue_version"), ""), bad),
        ("fingerprint-not-an-object", _edit(base, ("fingerprint",), hex_a), bad),
        (
            "fingerprint-digest-not-hex",
            _edit(base, ("fingerprint", "runtime_recipe_digest"), "not-a-digest"),
            bad,
        ),
        (
            "fingerprint-wrong-recipe-digest",
            _edit(base, ("fingerprint", "runtime_recipe_digest"), hex_a),
            "FingerprintMismatch",
        ),
        (
            "fingerprint-claims-other-axes",
            _edit(base, ("recipe", "kv_dtype"), "bfloat16"),
            "FingerprintMismatch",
        ),
    ]


def build_recipe_vectors() -> dict[str, Any]:
    valid = _valid_vectors()
    base = valid[0][1]
    split = valid[2][1]
    return {
        "description": (
            "Recipe identity blocks (schema_version 1) and the digests both sides derive: "
            "sha256(canonical_json({'domain': DOMAIN, 'body': {...}})). Every vector must "
            "parse and reproduce 'expected'; every rejection must raise 'error'. Written by "
            "tests/core/build_vectors.py from core/recipes/recipe_identity.py."
        ),
        "domains": {
            "artifact": ARTIFACT_DIGEST_DOMAIN,
            "recipe": RECIPE_DIGEST_DOMAIN,
            "shard_binding": SHARD_BINDING_DIGEST_DOMAIN,
        },
        "vectors": [
            {"name": name, "identity": block, "expected": _expected(block)} for name, block in valid
        ],
        "rejections": [
            {"name": name, "identity": identity, "error": error}
            for name, identity, error in _rejections(base, split)
        ],
    }


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main() -> None:
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    SIGNED_REQUEST_VECTORS.write_text(render(build_signed_request_vectors()), encoding="utf-8")
    RECIPE_VECTORS.write_text(render(build_recipe_vectors()), encoding="utf-8")
    ADMISSION_VECTORS.write_text(render(build_admission_vectors_doc()), encoding="utf-8")


def build_admission_vectors_doc() -> dict[str, Any]:
    """The admission cases against the recipe vectors' whole-model fp32 block."""
    return build_admission_vectors(_block(recipe=_AXES_FP32, start=0, end=15))


if __name__ == "__main__":
    main()
