"""The network's description as the operator set it, with the models it serves now.

Signed by the tracker key so an app can show it as the tracker's own word, with a
caller's challenge inside so an old answer cannot be replayed as a fresh one.
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

from sqlalchemy.orm import Session

from tracker_service.api.schemas.network import NetworkModelPublic, NetworkPublic
from tracker_service.api.status import HEALTHY, model_health
from tracker_service.config import Settings
from tracker_service.domain.keys import NETWORK_INFO_DOMAIN, TrackerKey
from tracker_service.domain.recipe_identity import STATUS_CERTIFIED
from tracker_service.services import state_view


def served_models(session: Session, now: float) -> list[NetworkModelPublic]:
    """One entry per model: ready when a certified recipe of it covers every layer."""
    ready: dict[str, bool] = defaultdict(bool)
    computers: dict[str, int] = defaultdict(int)
    for row, shapes in state_view.recipes_with_shapes(session, now=now):
        health = model_health(row, shapes)
        computers[row.artifact_id] += health.live_nodes
        ready[row.artifact_id] |= health.status == HEALTHY and row.status == STATUS_CERTIFIED
    return [
        NetworkModelPublic(artifact_id=name, ready=ready[name], computers=computers[name])
        for name in sorted(computers)
    ]


def network_info(
    settings: Settings,
    key: TrackerKey,
    session: Session,
    *,
    tracker_url: str,
    challenge: str | None = None,
) -> NetworkPublic:
    document: dict[str, Any] = {
        "name": settings.network_name,
        "description": settings.network_description,
        "operator": settings.network_operator,
        "contact": settings.network_contact,
        "terms_url": settings.network_terms_url,
        "tracker_url": tracker_url,
        "private": settings.private,
        "models": [m.model_dump() for m in served_models(session, time.time())],
        "tracker_public_key": key.public_key_b64,
        "key_fingerprint": key.fingerprint,
        "challenge": challenge,
    }
    return NetworkPublic(**document, signature=key.sign(NETWORK_INFO_DOMAIN, document))
