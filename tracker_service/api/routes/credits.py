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

from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from starlette.concurrency import run_in_threadpool

from tracker_service.api.deps import Context
from tracker_service.api.routes import error_responses, refuse
from tracker_service.api.schemas.credits import (
    AccountClaimCreate,
    AccountPublic,
    CreditDetailPublic,
    CreditPagePublic,
    as_json,
)
from tracker_service.domain.credit_rules import (
    address_group,
)
from tracker_service.errors import LinkRefused
from tracker_service.services import credit_links
from tracker_service.services.credits import LeaderboardCache

router = APIRouter(tags=["credits"])

MAX_PAGE = 200


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
        linked = await run_in_threadpool(
            credit_links.link_account,
            context.settings,
            context.database,
            body.model_dump(),
            api_key,
            address,
        )
    except LinkRefused as exc:
        raise refuse(exc.status_code, exc.reason, exc.message) from exc
    _board(request).invalidate()
    return AccountPublic(
        account=linked.account,
        display_name=linked.display_name,
        team=linked.team,
        node_ids=linked.node_ids,
        api_key_linked=linked.api_key_linked,
    )
