"""Credit for contributors: the leaderboard, one entry, and linking an account.

``GET /api/v1/credits`` ranks accounts (an unlinked identity stands alone),
identities or teams; ``GET /api/v1/credits/{id}`` is one of them with its
identities; ``POST /api/v1/credits/accounts`` links identities to an account,
each signing the same statement (``docs/credits.md``). A request that also
carries ``Authorization: Bearer <API key>`` links that key, when the signed
statement names it: its requests then earn the account's own nodes nothing and
spend the account's credit on priority. Leaderboards come from the ledger's
cache (services/credits.py), never re-summed per request; account creation is
limited per identity and per address group.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from starlette.concurrency import run_in_threadpool

from tracker_service.api.deps import Context, TrackerContext
from tracker_service.api.routes import error_responses, refuse
from tracker_service.api.schemas.credits import (
    AccountClaimCreate,
    AccountPublic,
    CreditDetailPublic,
    CreditPagePublic,
    as_json,
)
from tracker_service.domain.credit_rules import (
    AccountClaim,
    address_group,
    check_claim,
    parse_claim,
)
from tracker_service.errors import LinkRefused
from tracker_service.services.credits import LeaderboardCache
from tracker_service.store import credits as ledger
from tracker_service.store.api_keys import find_api_key
from tracker_service.store.hashed_secrets import hash_secret

router = APIRouter(tags=["credits"])

MAX_PAGE = 200
DAY_S = 86400.0


def _board(request: Request) -> LeaderboardCache:
    board: LeaderboardCache = request.app.state.gateway.credits.board
    return board


def _page(board: LeaderboardCache, kind: str, offset: int, limit: int) -> dict[str, Any]:
    rows = board.rows(kind)
    return {
        "kind": kind,
        "total_rows": len(rows),
        "offset": offset,
        "limit": limit,
        "rows": [as_json(r, with_identities=False) for r in rows[offset : offset + limit]],
    }


@router.get("/api/v1/credits", response_model=CreditPagePublic, responses=error_responses(422))
async def credits(
    request: Request,
    kind: Annotated[str, Query(pattern="^(account|identity|team)$")] = "account",
    offset: Annotated[int, Query(ge=0)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
) -> dict[str, Any]:
    """The leaderboard, best first: total, last 24 h and last 7 days of credit."""
    return await run_in_threadpool(_page, _board(request), kind, offset, limit)


def _one(board: LeaderboardCache, credit_id: str) -> dict[str, Any]:
    row = board.find(credit_id)
    if row is None:
        raise refuse(
            404,
            "unknown-credit-id",
            f"no account, identity or team '{credit_id}' has credit here; "
            "GET /api/v1/credits lists those that do",
        )
    return as_json(row, with_identities=True)


@router.get(
    "/api/v1/credits/{credit_id}",
    response_model=CreditDetailPublic,
    responses=error_responses(404, 422),
)
async def credit(credit_id: str, request: Request) -> dict[str, Any]:
    """One account, identity or team, with each identity's credit and any forfeit."""
    return await run_in_threadpool(_one, _board(request), credit_id[:128])


def _check_creation(
    context: TrackerContext, session: Any, claim: AccountClaim, address: str, now: float
) -> None:
    """Refuse a new account past the per-identity or per-address daily limit."""
    if ledger.account_exists(session, claim.account):
        return
    settings = context.settings
    by_identity, by_address = ledger.accounts_created_since(
        session, since=now - DAY_S, by=claim.node_ids[:1], address=address
    )
    if by_identity >= settings.credit_accounts_per_identity_per_day:
        raise LinkRefused(
            "too-many-accounts",
            f"identity {claim.node_ids[0]} created {by_identity} accounts in the last day, "
            "its limit; link it to one of them instead, or try again tomorrow",
            status_code=429,
        )
    if address and by_address >= settings.credit_accounts_per_address_per_day:
        raise LinkRefused(
            "too-many-accounts",
            f"{by_address} accounts were created from your address in the last day, its "
            "limit; link to an existing account instead, or try again tomorrow",
            status_code=429,
        )


def _claim(
    context: TrackerContext, body: dict[str, Any], api_key: str | None, address: str
) -> AccountPublic:
    claim, signatures = parse_claim(body)
    now = time.time()
    with context.database.sessions.begin() as session:
        key_id = None
        if api_key is not None:
            found = find_api_key(session, api_key)
            if found is None:
                raise LinkRefused(
                    "invalid-api-key",
                    "the API key sent to be linked is unknown or revoked; send a valid one or none",
                    status_code=401,
                )
            key_id = found.id
        check_claim(
            claim,
            signatures,
            ledger.public_keys(session, list(claim.node_ids)),
            now=now,
            members=ledger.account_members(session, claim.account),
            api_key_sha256=hash_secret(api_key) if api_key is not None else "",
        )
        _check_creation(context, session, claim, address, now)
        ledger.save_claim(session, claim, now=now, key_id=key_id, address=address)
        members = ledger.account_members(session, claim.account)
        linked = key_id is not None or bool(ledger.account_has_key(session, claim.account))
    return AccountPublic(
        account=claim.account,
        display_name=claim.display_name,
        team=claim.team,
        node_ids=members,
        api_key_linked=linked,
    )


@router.post(
    "/api/v1/credits/accounts",
    response_model=AccountPublic,
    responses=error_responses(401, 403, 404, 422, 429),
)
async def link_account(
    body: AccountClaimCreate,
    context: Context,
    request: Request,
    authorization: Annotated[str | None, Header()] = None,
) -> AccountPublic:
    """Create or update an account and link the identities that signed the statement."""
    api_key = None
    if authorization:
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise refuse(401, "invalid-api-key", "send the key as 'Authorization: Bearer <key>'")
        api_key = token.strip()
    address = address_group(request.client.host if request.client else None)
    try:
        linked = await run_in_threadpool(_claim, context, body.model_dump(), api_key, address)
    except LinkRefused as exc:
        raise refuse(exc.status_code, exc.reason, exc.message) from exc
    _board(request).invalidate()
    return linked
