"""This computer on the credit leaderboard: link its identity to an account of its own.

The contributor may give a display name and team (the wizard's last page, or
Settings); once the node has registered, the app signs the account statement
with this computer's key (``core.network.credit_account``) and posts it to the tracker
the node registered with. Each computer gets its own account, ``pc-<node id>``.

Nothing is sent for a contributor who never gave a name or team: the leaderboard
then lists the computer by its node id, as for any unlinked identity. What the
tracker last accepted is remembered (``SettingsStore.credit_link``), so a changed
name is posted again, a cleared one is posted empty, and an unchanged one is not
posted at every start. Pure (no Qt): ``app/ui/credit_linker.py`` runs
:func:`link_this_computer` in the background and shows :func:`failure_sentence`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import httpx

from app.network_join import APP_PROFILE
from app.texts import text
from core.errors import IdentityError, MeshnetError, TrackerUnreachable
from core.identity.keystore import key_store
from core.network.credit_account import clean_label, signed_claim_body, this_computer_claim
from core.network.tracker_client import TrackerClient

log = logging.getLogger(__name__)

TIMEOUT_S = 10.0
OTHER_IDENTITY = "other-identity"


@dataclass(frozen=True)
class LinkWish:
    """What the leaderboard should show for this identity on this tracker."""

    tracker_url: str
    node_id: str
    display_name: str
    team: str

    @classmethod
    def of(
        cls, registration: Mapping[str, Any] | None, display_name: str, team: str
    ) -> LinkWish | None:
        """The wish once the node has registered (``node_id``, ``tracker_url``); else None."""
        found = registration or {}
        tracker_url, node_id = found.get("tracker_url"), found.get("node_id")
        if not isinstance(tracker_url, str) or not isinstance(node_id, str):
            return None
        return cls(tracker_url, node_id, clean_label(display_name), clean_label(team))

    @classmethod
    def from_record(cls, record: Mapping[str, Any] | None) -> LinkWish | None:
        try:
            return cls(**{key: str((record or {})[key]) for key in cls.__dataclass_fields__})
        except KeyError:
            return None

    def record(self) -> dict[str, str]:
        return asdict(self)

    @property
    def named(self) -> bool:
        return bool(self.display_name or self.team)


def needs_posting(wish: LinkWish, accepted: LinkWish | None) -> bool:
    """Post when the name or team differ from what this tracker last accepted for this
    identity; never for a contributor who has not given either (opting in is theirs)."""
    same_place = accepted is not None and (accepted.tracker_url, accepted.node_id) == (
        wish.tracker_url,
        wish.node_id,
    )
    if same_place:
        assert accepted is not None
        return (accepted.display_name, accepted.team) != (wish.display_name, wish.team)
    return wish.named


def link_this_computer(
    wish: LinkWish,
    *,
    profile: str = APP_PROFILE,
    transport: httpx.BaseTransport | None = None,
    now: float | None = None,
) -> dict[str, Any]:
    """Sign and post the claim; the tracker's answer (``account``, ``node_ids``, ...).

    Raises IdentityError when this computer's key is not the one that registered,
    TrackerRefused or TrackerUnreachable (core.network.tracker_client) otherwise.
    """
    identity = key_store(profile).load()
    if identity is None or identity.node_id != wish.node_id:
        raise IdentityError(
            f"the key in this computer's keyring ({identity.node_id if identity else 'none'}) "
            f"is not the one registered as {wish.node_id}",
            reason=OTHER_IDENTITY,
        )
    claim = this_computer_claim(identity, wish.display_name, wish.team, now=now)
    with TrackerClient(wish.tracker_url, identity, timeout_s=TIMEOUT_S, transport=transport) as c:
        answer = c.link_credit_account(signed_claim_body(claim, identity))
    log.info(
        "linked this computer to credit account %s (name %r, team %r)",
        claim.account,
        claim.display_name,
        claim.team,
    )
    return answer


def linked_sentence(wish: LinkWish) -> str:
    return text("leaderboard.done" if wish.named else "leaderboard.cleared")


def failure_sentence(exc: BaseException) -> str:
    """A plain sentence for the Details view, with the reason code for whoever helps."""
    if isinstance(exc, TrackerUnreachable):
        return text("leaderboard.unreachable")
    code = exc.reason if isinstance(exc, MeshnetError) else type(exc).__name__
    return f"{text('leaderboard.refused')} [{code}]"
