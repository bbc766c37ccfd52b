"""Sign and check a whole JSON document under a domain tag, as the tracker does.

Only the tests use these (the node signs requests and receipts, never whole
documents), so they live here rather than in core/signing.py.
"""

from __future__ import annotations

from typing import Any

from core.identity import NodeIdentity, verify
from core.signing import canonical_json


def sign_document(identity: NodeIdentity, domain: bytes, document: Any) -> str:
    """Base64 signature over ``domain + canonical_json(document)``."""
    return identity.sign_b64(domain + canonical_json(document))


def verify_document(public_key_b64: str, domain: bytes, document: Any, signature: str) -> bool:
    try:
        message = domain + canonical_json(document)
    except (TypeError, ValueError):
        return False
    return verify(public_key_b64, message, signature)
