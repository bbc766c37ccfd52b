"""The certifier: takes a dark recipe out of the dark with a real distributed forward.

When a dark recipe is covered by at least two distinct live, reachable nodes,
the certifier forms a route over >= 2 of them (purpose ``certify``), generates
real tokens through it, closes every hop and verifies each node-signed receipt
against the key that node registered. The receipts and the identities the
nodes registered with become :class:`DistributedForwardEvidence`, and the
ledger promotes the recipe only if its own rules accept that evidence (one
transaction). A failed attempt leaves the recipe dark with the reason in its
detail (state API and status page) and is retried with exponential back-off;
a change in the set of reachable nodes retries at once. A recipe the operator
revoked is never attempted until the revocation is lifted. A certified recipe
a quarantine marked (a node that helped certify it was caught lying,
store/reverify.py) is verified again first, by routes without that node; if
none passes it goes dark with the reason.

The prompt: the tracker holds no weights. It fetches the recipe's
``tokenizer.json`` from a hop (``GET /v1/tokenizer``, under the endpoint policy
like every dial it makes) and uses it only if its SHA-256 equals the recipe's
``tokenizer_revision`` axis; otherwise it sends a fixed token-id prompt (real
tokens still come out; they are just not words).

The chat template: after a successful certification the certifier asks every
hop of the certifying route for its ``tokenizer_config.json``; when all of
these distinct nodes serve the same bytes, their SHA-256 is pinned in the
ledger, and the gateway accepts a template only with exactly those bytes.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

import httpx
from tokenizers import Tokenizer

from tracker_service.domain.recipe_identity import (
    DistributedForwardEvidence,
    PresentedIdentity,
    RecipeIdentityError,
    parse_identity,
)
from tracker_service.domain.route_formation import PURPOSE_CERTIFY
from tracker_service.domain.tickets import HopReceipt
from tracker_service.errors import (
    CertificationFailed,
    NoRoute,
    RouteFailure,
    RouteRefused,
)
from tracker_service.security.node_tls import node_http_client
from tracker_service.services.background import BackgroundLoop
from tracker_service.services.hop_link import CONNECTION_CLOSED, TIMEOUT, UNREACHABLE
from tracker_service.services.node_files import (
    TOKENIZER_CONFIG_PATH,
    TOKENIZER_PATH,
    agreed_digest,
    fetch_metadata,
)
from tracker_service.services.reachability import ReachabilityMonitor
from tracker_service.services.route_planner import RoutePlanner
from tracker_service.services.route_session import RouteSession
from tracker_service.services.session_plan import RoutePlan, Sampling
from tracker_service.store.db import Database
from tracker_service.store.ledger import PersistentLedger, fail_reverification
from tracker_service.store.route_candidates import (
    Key,
    RecipeInfo,
    dark_recipes,
    identity_blocks,
    pin_chat_template,
    recipes_to_reverify_info,
    record_certification_failure,
)

log = logging.getLogger(__name__)

PROMPT_TEXT = "The capital of France is"
# Small ids exist in every vocabulary; used when no verified tokenizer is at hand.
FIXED_PROMPT_IDS: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8)
MAX_TOKENIZER_BYTES = 64 * 1024 * 1024
_HEX64 = re.compile(r"^[0-9a-f]{64}$")

# Failure reasons of an attempt (a hop's own refusal code passes through).
NO_ROUTE = "no-route"
ROUTE_REFUSED = "route-refused"
EVIDENCE_REFUSED = "evidence-refused"
RECEIPTS_DISAGREE = "receipts-disagree"
ROUTES_DISAGREE = "routes-disagree"


@dataclass(frozen=True)
class Attempt:
    key: Key
    certified: bool
    reason: str  # "certified" or the failure's reason code
    message: str
    route_session_id: str | None = None
    node_ids: tuple[str, ...] = ()
    token_ids: tuple[int, ...] = ()
    prompt_source: str = ""
    failed_node: str | None = None


@dataclass
class _Backoff:
    next_at: float
    delay_s: float
    nodes: frozenset[str]


async def fetch_tokenizer(
    client: httpx.AsyncClient,
    endpoints: Sequence[str],
    revision: str,
    *,
    allow_private: bool = False,
    timeout_s: float = 10.0,
) -> Tokenizer | None:
    """The recipe's tokenizer from the first node that serves the exact bytes.

    Each node is fetched under the endpoint policy (node_files.stream_from_node):
    a private address is refused unless ``allow_private``, and the GET goes to the
    address resolved once."""
    if not _HEX64.match(revision):
        return None
    for endpoint in endpoints:
        body = await fetch_metadata(
            client,
            endpoint,
            TOKENIZER_PATH,
            allow_private=allow_private,
            timeout_s=timeout_s,
            max_bytes=MAX_TOKENIZER_BYTES,
        )
        if body is None:
            continue
        if hashlib.sha256(body).hexdigest() != revision:
            log.warning("node at %s serves a tokenizer that is not revision %s", endpoint, revision)
            continue
        try:
            return Tokenizer.from_str(body.decode("utf-8"))
        except Exception as exc:  # the right bytes, but not a tokenizer this library reads
            log.info("tokenizer revision %s does not load: %s", revision[:12], exc)
            return None
    return None


def check_receipts(plan: RoutePlan, receipts: Sequence[HopReceipt], steps: int) -> None:
    """Every hop ran its share, the shares tile the model, and all did the same work."""
    if len(receipts) != len(plan.hops):
        raise CertificationFailed(
            RECEIPTS_DISAGREE, f"{len(receipts)} receipts for a route of {len(plan.hops)} hops"
        )
    covered = 0
    for hop, receipt in zip(plan.hops, receipts, strict=True):
        # exactly what its ticket asked: node, effective start, stop (effective_end or end)
        asked = (hop.node_id, hop.effective_start, hop.end)
        signed = (receipt.node_id, receipt.start, receipt.end)
        if signed != asked or receipt.start != covered:
            raise CertificationFailed(
                RECEIPTS_DISAGREE,
                f"node {receipt.node_id} signed layers {receipt.start}-{receipt.end}; the route "
                f"needed node {hop.node_id} over layers {covered}-{hop.end}",
                node_id=hop.node_id if signed != asked else None,  # it signed what it did
            )
        covered = receipt.end
    if covered != plan.layer_count:
        raise CertificationFailed(
            RECEIPTS_DISAGREE, f"the receipts cover layers 0-{covered} of {plan.layer_count}"
        )
    work = {(r.steps, r.tokens) for r in receipts}
    if len(work) != 1 or receipts[0].steps != steps:
        raise CertificationFailed(
            RECEIPTS_DISAGREE,
            f"hops report different work {sorted(work)}; the client ran {steps} steps",
        )


def build_evidence(
    plan: RoutePlan,
    receipts: Sequence[HopReceipt],
    identities: dict[str, PresentedIdentity],
    tokens_generated: int,
) -> DistributedForwardEvidence:
    """Evidence from verified receipts and the identities the nodes registered with."""
    participants = tuple(identities[hop.node_id] for hop in plan.hops)
    return DistributedForwardEvidence(
        route_session_id=plan.route_session_id,
        route_epoch=plan.epoch,
        node_ids=tuple(r.node_id for r in receipts),
        # What each hop signed that it computed, not what its identity claims.
        shard_ranges=tuple((r.start, r.end) for r in receipts),
        tokens_generated=tokens_generated,
        layer_count=plan.layer_count,
        fingerprint=plan.fingerprint,
        participants=participants,
    )


@dataclass
class CertifierSettings:
    poll_s: float = 5.0
    backoff_s: float = 5.0
    backoff_max_s: float = 300.0
    new_tokens: int = 4
    open_timeout_s: float = 15.0
    step_timeout_s: float = 60.0
    # The endpoint policy for every dial the certifier makes (files and sessions).
    allow_private_endpoints: bool = False
    allow_plaintext_nodes: bool = False  # route through unpinned ws:// nodes (development)


class Certifier(BackgroundLoop):
    """Background task promoting dark recipes; :meth:`run_pass` is one sweep."""

    task_name = "meshnet-certifier"

    def __init__(
        self,
        database: Database,
        planner: RoutePlanner,
        ledger: PersistentLedger,
        *,
        monitor: ReachabilityMonitor | None = None,
        settings: CertifierSettings | None = None,
    ) -> None:
        self._settings = settings or CertifierSettings()
        super().__init__(self._settings.poll_s)
        self._db = database
        self._planner = planner
        self._ledger = ledger
        self._monitor = monitor
        self._backoff: dict[Key, _Backoff] = {}
        self._tokenizers: dict[str, Tokenizer] = {}  # by revision: verified bytes only
        self.last_attempts: dict[Key, Attempt] = {}

    async def run_pass(self) -> list[Attempt]:
        """Verify again what a quarantine marked, then attempt every dark recipe that >= 2
        reachable nodes cover and is not backing off (a revoked one is never listed)."""
        attempts: list[Attempt] = []
        for info in await asyncio.to_thread(self._to_reverify):
            attempts.append(await self._reverify(info))
        for info in await asyncio.to_thread(self._dark):
            _, candidates = await asyncio.to_thread(self._planner.candidates, info.key)
            nodes = frozenset(c.node_id for c in candidates)
            if len(nodes) < 2:
                continue
            backoff = self._backoff.get(info.key)
            if backoff is not None and time.time() < backoff.next_at and backoff.nodes == nodes:
                continue
            attempt = await self.certify(info)
            attempts.append(attempt)
            if attempt.certified:
                self._backoff.pop(info.key, None)
            else:
                delay = self._settings.backoff_s if backoff is None else backoff.delay_s * 2
                delay = min(delay, self._settings.backoff_max_s)
                self._backoff[info.key] = _Backoff(time.time() + delay, delay, nodes)
        return attempts

    def _dark(self) -> list[RecipeInfo]:
        with self._db.session() as session:
            return dark_recipes(session)

    def _to_reverify(self) -> list[RecipeInfo]:
        with self._db.session() as session:
            return recipes_to_reverify_info(session)

    async def _reverify(self, info: RecipeInfo) -> Attempt:
        """One fresh certifying forward by routes without the quarantined node (never
        routed again); none passing sends the recipe dark with the reason."""
        _, candidates = await asyncio.to_thread(self._planner.candidates, info.key)
        if len({c.node_id for c in candidates}) < 2:
            attempt = Attempt(
                info.key,
                False,
                NO_ROUTE,
                "no route without it: fewer than two live, reachable nodes cover the recipe",
            )
            self.last_attempts[info.key] = attempt
            await asyncio.to_thread(self._fail_reverification, info.key, attempt)
            log.warning("re-verifying %s failed: %s", info.recipe_id, attempt.message)
            return attempt
        return await self.certify(info, reverify=True)

    def _fail_reverification(self, key: Key, attempt: Attempt) -> None:
        with self._db.sessions.begin() as session:
            fail_reverification(
                session, key, f"{attempt.message} [{attempt.reason}]", now=time.time()
            )

    async def certify(self, info: RecipeInfo, *, reverify: bool = False) -> Attempt:
        """One attempt; never raises. The result is also kept in ``last_attempts``.

        ``reverify``: the recipe is certified and a quarantine asked for it to be
        verified again; a failure sends it dark instead of noting the failure."""
        try:
            attempt = await self._attempt(info)
        except CertificationFailed as exc:
            attempt = Attempt(info.key, False, exc.reason, exc.message, failed_node=exc.node_id)
        self.last_attempts[info.key] = attempt
        if attempt.certified:
            log.info(
                "recipe %s certified (prompt from %s, tokens %s): %s",
                info.recipe_id,
                attempt.prompt_source,
                list(attempt.token_ids),
                attempt.message,
            )
        elif reverify:
            log.warning("re-verifying %s failed: %s", info.recipe_id, attempt.message)
            await asyncio.to_thread(self._fail_reverification, info.key, attempt)
        else:
            log.warning("certifying %s failed: %s", info.recipe_id, attempt.message)
            await asyncio.to_thread(self._record_failure, info.key, attempt)
        return attempt

    def _record_failure(self, key: Key, attempt: Attempt) -> None:
        with self._db.sessions.begin() as session:
            record_certification_failure(
                session, key, f"{attempt.message} [{attempt.reason}]", now=time.time()
            )

    async def _plan(self, info: RecipeInfo) -> RoutePlan:
        """A certify route; avoids the node that failed the last attempt when it can."""
        previous = self.last_attempts.get(info.key)
        avoid = [previous.failed_node] if previous and previous.failed_node else []
        try:
            try:
                return await self._certify_route(info.key, avoid)
            except NoRoute:
                if not avoid:
                    raise
                return await self._certify_route(info.key, [])
        except NoRoute as exc:
            raise CertificationFailed(NO_ROUTE, exc.message) from exc
        except RouteRefused as exc:
            raise CertificationFailed(ROUTE_REFUSED, exc.message) from exc

    async def _certify_route(self, key: Key, exclude: list[str]) -> RoutePlan:
        """The cheapest route of >= 2 nodes; when none runs every hop to its shard's
        end (nodes that each hold the whole model), one whose hops stop early."""
        try:
            return await asyncio.to_thread(
                self._planner.plan, key, purpose=PURPOSE_CERTIFY, min_nodes=2, exclude=exclude
            )
        except NoRoute:
            return await asyncio.to_thread(self._planner.plan_early_ended, key, exclude=exclude)

    async def _forward(
        self, plan: RoutePlan, prompt: Sequence[int]
    ) -> tuple[list[int], list[HopReceipt]]:
        """Greedy tokens through one route, and its hops' verified receipts."""
        new_tokens = self._settings.new_tokens
        try:
            async with RouteSession(
                plan,
                open_timeout_s=self._settings.open_timeout_s,
                step_timeout_s=self._settings.step_timeout_s,
                allow_private_endpoints=self._settings.allow_private_endpoints,
                allow_plaintext_nodes=self._settings.allow_plaintext_nodes,
            ) as session:
                await session.open(len(prompt) + new_tokens, Sampling(temperature=0.0))
                tokens = [t.token_id async for t in session.generate(prompt, new_tokens)]
                receipts = await session.close()
        except RouteFailure as exc:
            if exc.reason in (UNREACHABLE, CONNECTION_CLOSED, TIMEOUT) and self._monitor:
                await asyncio.to_thread(self._monitor.suspect, exc.node_id)
            raise CertificationFailed(
                exc.reason, f"route {plan.route_session_id}: {exc}", node_id=exc.node_id
            ) from exc
        check_receipts(plan, receipts, steps=len(tokens))
        return tokens, receipts

    async def _cross_check(self, plan: RoutePlan, prompt: Sequence[int], tokens: list[int]) -> None:
        """The same greedy forward over a second route sharing no node, when one exists.

        One route proves the nodes on it agree with each other; a second, disjoint
        one proves them against other strangers. Both must emit the same tokens.
        """
        exclude = [h.node_id for h in plan.hops]
        try:
            second = await self._certify_route(plan.fingerprint, exclude)
        except (NoRoute, RouteRefused):
            return  # no disjoint route today: one route certifies, as before
        other, _receipts = await self._forward(second, prompt)
        if other != tokens:
            raise CertificationFailed(
                ROUTES_DISAGREE,
                f"routes {plan.route_session_id} and {second.route_session_id} share no node "
                f"and emit different greedy tokens ({tokens} vs {other})",
            )

    async def _attempt(self, info: RecipeInfo) -> Attempt:
        plan = await self._plan(info)
        prompt, source = await self._prompt(plan, info)
        tokens, receipts = await self._forward(plan, prompt)
        await self._cross_check(plan, prompt, tokens)
        identities = await asyncio.to_thread(self._identities, plan)
        evidence = build_evidence(plan, receipts, identities, len(tokens))
        try:
            status = await asyncio.to_thread(
                self._ledger.certify, identities[plan.hops[0].node_id], evidence
            )
        except RecipeIdentityError as exc:
            raise CertificationFailed(EVIDENCE_REFUSED, str(exc)) from exc
        await self._pin_chat_template(plan, info)
        return Attempt(
            info.key,
            True,
            "certified",
            status.detail,
            route_session_id=plan.route_session_id,
            node_ids=evidence.node_ids,
            token_ids=tuple(tokens),
            prompt_source=source,
        )

    async def _pin_chat_template(self, plan: RoutePlan, info: RecipeInfo) -> None:
        """Pin the template every certifying hop serves identically (else pin nothing)."""
        try:
            private = self._settings.allow_private_endpoints
            if self._client is not None:
                bodies = [
                    await fetch_metadata(
                        self._client, h.endpoint, TOKENIZER_CONFIG_PATH, allow_private=private
                    )
                    for h in plan.hops
                ]
            else:
                async with node_http_client() as client:
                    bodies = [
                        await fetch_metadata(
                            client, h.endpoint, TOKENIZER_CONFIG_PATH, allow_private=private
                        )
                        for h in plan.hops
                    ]
            digest = agreed_digest(bodies)
            if digest is None:
                log.warning(
                    "recipe %s: the certifying nodes do not serve one tokenizer_config.json; "
                    "no chat template pinned",
                    info.recipe_id,
                )
                return
            await asyncio.to_thread(self._pin, info.key, digest)
            log.info("recipe %s: chat template %s pinned", info.recipe_id, digest[:12])
        except Exception:  # the certification stands; the gateway falls back to agreement
            log.exception("pinning the chat template of %s failed", info.recipe_id)

    def _pin(self, key: Key, digest: str) -> None:
        with self._db.sessions.begin() as session:
            pin_chat_template(session, key, digest)

    def _identities(self, plan: RoutePlan) -> dict[str, PresentedIdentity]:
        """Re-parse (re-derive) the identity blocks the route's nodes registered with."""
        with self._db.session() as session:
            blocks = identity_blocks(session, [h.node_id for h in plan.hops])
        identities: dict[str, PresentedIdentity] = {}
        for hop in plan.hops:
            if hop.node_id not in blocks:
                raise CertificationFailed(
                    EVIDENCE_REFUSED, f"node {hop.node_id} left the registry during the forward"
                )
            try:
                identities[hop.node_id] = parse_identity(blocks[hop.node_id])
            except RecipeIdentityError as exc:
                raise CertificationFailed(
                    EVIDENCE_REFUSED, f"node {hop.node_id}'s identity no longer parses: {exc}"
                ) from exc
        return identities

    async def _prompt(self, plan: RoutePlan, info: RecipeInfo) -> tuple[list[int], str]:
        """Token ids of the fixed prompt, from a verified tokenizer when one is served."""
        revision = str(info.axes.get("tokenizer_revision", ""))
        tokenizer = self._tokenizers.get(revision)
        if tokenizer is None:
            endpoints = [h.endpoint for h in plan.hops]
            private = self._settings.allow_private_endpoints
            if self._client is not None:
                tokenizer = await fetch_tokenizer(
                    self._client, endpoints, revision, allow_private=private
                )
            else:
                async with node_http_client() as client:
                    tokenizer = await fetch_tokenizer(
                        client, endpoints, revision, allow_private=private
                    )
            if tokenizer is not None:
                self._tokenizers[revision] = tokenizer
        if tokenizer is not None:
            ids = tokenizer.encode(PROMPT_TEXT).ids
            if ids:
                return list(ids), "tokenizer"
        return list(FIXED_PROMPT_IDS), "fixed-ids"
