"""Redeeming an invite: a node's identity trades the code for its join token."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from tracker_service.api.deps import Context, TrackerContext
from tracker_service.api.request_guard import admit_address
from tracker_service.api.routes import error_responses, parse_body, refuse, signed_body
from tracker_service.api.schemas.network import InviteRedeemCreate, InviteRedeemPublic
from tracker_service.domain.keys import INVITE_REDEEMED_DOMAIN
from tracker_service.errors import INVITE_UNKNOWN, InviteRefused
from tracker_service.security.auth import verify_signed_request
from tracker_service.services import registration

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api/v1/invites", tags=["invites"])
REDEEM_PATH = "/api/v1/invites/redeem"


def own_url(context: TrackerContext, request: Request) -> str:
    """The URL this tracker names itself by: the operator's public URL, else as reached."""
    return (context.settings.public_url or str(request.base_url)).rstrip("/")


@router.post(
    "/redeem",
    response_model=InviteRedeemPublic,
    responses=error_responses(401, 404, 410, 413, 422, 429),
    openapi_extra=signed_body(InviteRedeemCreate),
)
async def redeem(request: Request, context: Context) -> InviteRedeemPublic:
    """Bind an invite to the signing node and answer the join token registration needs.

    The same identity redeeming again gets a fresh token and spends no use."""
    admit_address(
        request,
        "invites",
        context.settings.registrations_per_minute_per_address,
        "invite redemptions",
    )
    signed = await verify_signed_request(
        request,
        database=context.database,
        keys=context.public_keys,
        nonces=context.nonces,
        key_from_body=True,
    )
    body = parse_body(InviteRedeemCreate, signed.body)
    try:
        redeemed = await run_in_threadpool(
            registration.redeem, context.database, body.code, signed.node_id
        )
    except InviteRefused as exc:
        log.info("invite refused node_id=%s reason=%s", signed.node_id, exc.reason)
        raise refuse(404 if exc.reason == INVITE_UNKNOWN else 410, exc.reason, exc.message) from exc
    log.info(
        "invite %d redeemed by node %s%s",
        redeemed.invite_id,
        signed.node_id,
        " (again)" if redeemed.again else "",
    )
    document: dict[str, Any] = {
        "node_id": signed.node_id,
        "join_token": redeemed.join_token,
        "again": redeemed.again,
        "tracker_url": own_url(context, request),
        "key_fingerprint": context.key.fingerprint,
        "nonce": signed.nonce,
    }
    return InviteRedeemPublic(
        **document, signature=context.key.sign(INVITE_REDEEMED_DOMAIN, document)
    )
