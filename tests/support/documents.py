"""Sign and check a whole JSON document under a domain tag, as the tracker does.

The node signs requests and receipts, never whole documents, so signing lives
here; checking is core/identity/signing.py's (the node checks its tracker's invite answers).
"""

from __future__ import annotations

from typing import Any

from core.identity.keypair import NodeIdentity
from core.identity.signing import canonical_json, verify_document


def sign_document(identity: NodeIdentity, domain: bytes, document: Any) -> str:
    """Base64 signature over ``domain + canonical_json(document)``."""
    return identity.sign_b64(domain + canonical_json(document))


__all__ = ["sign_document", "verify_document"]
