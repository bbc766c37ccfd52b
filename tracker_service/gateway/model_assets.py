"""What the gateway needs of a model besides the route, from verified bytes only.

The tracker holds no weights and trusts no single node's files:

- ``tokenizer.json`` is accepted only if its SHA-256 equals the recipe's
  ``tokenizer_revision`` axis (the certifier's check);
- ``config.json`` (context length, end-of-sequence ids) only if its digest
  equals the ``architecture_digest`` the node's identity block pins;
- ``tokenizer_config.json`` (the chat template) only with the SHA-256 the
  ledger pinned when the recipe was certified (every certifying node served
  those bytes). For a recipe certified without a pin, at least two distinct
  nodes must serve byte-identical copies, and that digest is pinned then. One
  node alone never imposes a template.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx
from tokenizers import Tokenizer

from tracker_service.domain.recipe_digests import canonical_sha256
from tracker_service.domain.recipe_identity import RecipeIdentityError, parse_identity
from tracker_service.domain.route_formation import Candidate
from tracker_service.errors import AssetsUnavailable, TemplateError
from tracker_service.gateway.chat_template import ChatTemplate
from tracker_service.security.node_tls import node_http_client
from tracker_service.services.certifier import fetch_tokenizer
from tracker_service.services.node_files import CONFIG_PATH, TOKENIZER_CONFIG_PATH, fetch_metadata
from tracker_service.store.db import Database
from tracker_service.store.route_candidates import (
    Key,
    RecipeInfo,
    identity_blocks,
    pin_chat_template,
)

log = logging.getLogger(__name__)

TEMPLATE_QUORUM = 2
RETRY_FAILED_S = 10.0


@dataclass(frozen=True)
class ModelAssets:
    tokenizer: Tokenizer
    template: ChatTemplate | None  # None: nodes disagree, or too few serve the same one
    template_sha256: str | None
    eos_ids: frozenset[int]
    context_length: int | None

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def decode(self, ids: Sequence[int]) -> str:
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=True))


def config_matches(body: bytes, architecture_digest: str) -> dict[str, Any] | None:
    """The parsed config when its bytes (or canonical JSON) hash to the pinned digest."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return None
    if not isinstance(parsed, dict):
        return None
    if architecture_digest in (hashlib.sha256(body).hexdigest(), canonical_sha256(parsed)):
        return parsed
    return None


def _eos_ids(tokenizer: Tokenizer, config: dict[str, Any], tokens: dict[str, Any]) -> set[int]:
    ids: set[int] = set()
    raw = config.get("eos_token_id")
    for value in raw if isinstance(raw, list) else [raw]:
        if isinstance(value, int) and not isinstance(value, bool):
            ids.add(value)
    eos = tokens.get("eos_token")
    if isinstance(eos, dict):
        eos = eos.get("content")
    eos_id = tokenizer.token_to_id(eos) if isinstance(eos, str) else None
    if eos_id is not None:
        ids.add(int(eos_id))
    return ids


class AssetStore:
    """Verified assets per fingerprint, fetched once (failures retried after a pause)."""

    def __init__(
        self,
        database: Database,
        client: httpx.AsyncClient | None = None,
        *,
        allow_private_endpoints: bool = False,
    ) -> None:
        self._db = database
        self._client = client
        # The endpoint policy for every file fetched from a node (node_files.py).
        self._private = allow_private_endpoints
        self._cache: dict[Key, ModelAssets] = {}
        self._failed: dict[Key, tuple[float, str]] = {}
        self._locks: dict[Key, asyncio.Lock] = {}

    async def get(self, info: RecipeInfo, candidates: Sequence[Candidate]) -> ModelAssets:
        cached = self._cache.get(info.key)
        if cached is not None:
            return cached
        failed = self._failed.get(info.key)
        if failed is not None and time.monotonic() < failed[0]:
            raise AssetsUnavailable(failed[1])
        lock = self._locks.setdefault(info.key, asyncio.Lock())
        async with lock:
            if info.key in self._cache:
                return self._cache[info.key]
            try:
                if self._client is None:
                    async with node_http_client() as client:
                        assets = await self._load(client, info, candidates)
                else:
                    assets = await self._load(self._client, info, candidates)
            except AssetsUnavailable as exc:
                self._failed[info.key] = (time.monotonic() + RETRY_FAILED_S, str(exc))
                raise
            self._cache[info.key] = assets
            self._failed.pop(info.key, None)
            return assets

    async def _load(
        self, client: httpx.AsyncClient, info: RecipeInfo, candidates: Sequence[Candidate]
    ) -> ModelAssets:
        nodes = list({c.node_id: c for c in candidates}.values())
        endpoints = [c.endpoint for c in nodes]
        revision = str(info.axes.get("tokenizer_revision", ""))
        tokenizer = await fetch_tokenizer(client, endpoints, revision, allow_private=self._private)
        if tokenizer is None:
            raise AssetsUnavailable(
                f"no live node serves the tokenizer.json of revision {revision[:12]} that "
                f"recipe {info.recipe_id} pins; try again when its nodes are back"
            )
        config = await self._config(client, nodes)
        tokens, template, template_sha = await self._template(client, info, endpoints)
        context = config.get("max_position_embeddings")
        assets = ModelAssets(
            tokenizer=tokenizer,
            template=template,
            template_sha256=template_sha,
            eos_ids=frozenset(_eos_ids(tokenizer, config, tokens)),
            context_length=int(context) if isinstance(context, int) and context > 0 else None,
        )
        log.info(
            "gateway assets for %s: tokenizer %s, template %s, context %s, eos %s",
            info.recipe_id,
            revision[:12],
            template_sha[:12] if template_sha else "none",
            assets.context_length,
            sorted(assets.eos_ids),
        )
        return assets

    async def _config(
        self, client: httpx.AsyncClient, nodes: Sequence[Candidate]
    ) -> dict[str, Any]:
        blocks = await asyncio.to_thread(self._identity_blocks, [c.node_id for c in nodes])
        for node in nodes:
            try:
                pinned = parse_identity(blocks[node.node_id]).architecture_digest
            except (KeyError, RecipeIdentityError):
                continue
            body = await fetch_metadata(
                client, node.endpoint, CONFIG_PATH, allow_private=self._private
            )
            parsed = config_matches(body, pinned) if body is not None else None
            if parsed is not None:
                return parsed
        log.warning("no node served a config.json matching its architecture digest")
        return {}

    def _identity_blocks(self, node_ids: list[str]) -> dict[str, dict[str, Any]]:
        with self._db.session() as session:
            return identity_blocks(session, node_ids)

    async def _template(
        self, client: httpx.AsyncClient, info: RecipeInfo, endpoints: Sequence[str]
    ) -> tuple[dict[str, Any], ChatTemplate | None, str | None]:
        pinned = info.chat_template_sha256
        if pinned is not None:
            for endpoint in endpoints:
                body = await fetch_metadata(
                    client, endpoint, TOKENIZER_CONFIG_PATH, allow_private=self._private
                )
                if body is not None and hashlib.sha256(body).hexdigest() == pinned:
                    return _load_template(body, pinned)
                if body is not None:
                    log.warning(
                        "node at %s serves a chat template that is not %s", endpoint, pinned
                    )
            log.warning("no live node serves the pinned chat template %s", pinned[:12])
            return {}, None, None
        bodies = await asyncio.gather(
            *(
                fetch_metadata(client, e, TOKENIZER_CONFIG_PATH, allow_private=self._private)
                for e in endpoints[:8]
            )
        )
        votes = Counter(b for b in bodies if b is not None)
        if not votes:
            return {}, ChatTemplate(None), None  # the model ships no template at all
        body, count = votes.most_common(1)[0]
        digest = hashlib.sha256(body).hexdigest()
        if count < TEMPLATE_QUORUM or (len(votes) > 1 and list(votes.values()).count(count) > 1):
            log.warning(
                "tokenizer_config.json %s is served by %d node(s); %d must agree",
                digest[:12],
                count,
                TEMPLATE_QUORUM,
            )
            return {}, None, None
        await asyncio.to_thread(self._pin, info.key, digest)
        return _load_template(body, digest)

    def _pin(self, key: Key, digest: str) -> None:
        with self._db.sessions.begin() as session:
            pin_chat_template(session, key, digest)


def _load_template(
    body: bytes, digest: str
) -> tuple[dict[str, Any], ChatTemplate | None, str | None]:
    try:
        tokens = json.loads(body)
        if not isinstance(tokens, dict):
            raise ValueError("not an object")
        template = ChatTemplate(
            _text(tokens.get("chat_template")),
            bos_token=_text(tokens.get("bos_token")) or "",
            eos_token=_text(tokens.get("eos_token")) or "",
        )
    except (ValueError, TemplateError) as exc:
        log.warning("tokenizer_config.json %s is unusable: %s", digest[:12], exc)
        return {}, None, None
    return tokens, template, digest


def _text(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else None
