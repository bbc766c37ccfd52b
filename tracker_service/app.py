"""create_app(settings): the tracker's FastAPI application, wired once.

Request handling is stateless over the store, so several replicas can serve
one PostgreSQL behind a load balancer; what lives in memory (the public-key
cache) is safe to hold per replica because a node id is the hash of its key.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic.json_schema import models_json_schema
from starlette.exceptions import HTTPException as StarletteHTTPException

from tracker_service import errors
from tracker_service.api.allowed_methods import allowed_methods
from tracker_service.api.auth_throttle import FailedAuthThrottle
from tracker_service.api.body_limit import BodyLimitMiddleware
from tracker_service.api.deps import TrackerContext
from tracker_service.api.job_settings import ARTIFACTS_PATH_PREFIX, build_jobs_state
from tracker_service.api.metrics import TrackerMetrics
from tracker_service.api.ollama_port import OllamaPortOnly
from tracker_service.api.openapi_responses import document_refusals
from tracker_service.api.routes import (
    SIGNED_BODY_MODELS,
    admin,
    allocation,
    anthropic_messages,
    chat,
    credits,
    http_refusal_response,
    invites,
    job_artifacts,
    jobs,
    network,
    nodes,
    ollama,
    openai,
    openai_responses,
    refusal_parts,
    refusal_response,
    route_requests,
    state,
)
from tracker_service.api.routes.heartbeat import HeartbeatShortcut
from tracker_service.config import Settings
from tracker_service.domain.keys import TrackerKey
from tracker_service.errors import GatewayError
from tracker_service.gateway import faces
from tracker_service.gateway.faces.response_store import ResponseStore
from tracker_service.gateway.observability import GatewayMetrics
from tracker_service.gateway.service import Gateway
from tracker_service.relay.app import mount_relay
from tracker_service.relay.hub import RelaySettings
from tracker_service.security.auth import NonceBook, PublicKeyCache
from tracker_service.services.credits import CreditLedger
from tracker_service.services.data_plane import RouteServices, lifespan
from tracker_service.store.db import Database
from tracker_service.store.ledger import PersistentLedger

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).resolve().parent / "static"
MAX_PATH_SHOWN = 200  # a junk path is echoed, but not all of it


def load_key(settings: Settings) -> TrackerKey:
    if settings.signing_key:
        return TrackerKey.from_seed_b64(settings.signing_key)
    return TrackerKey.load_or_create(settings.key_path())


def build_context(settings: Settings) -> TrackerContext:
    """Open (and migrate) the store and load the key: everything routes depend on."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    database = Database(settings.database_url())
    database.migrate()
    ledger = PersistentLedger(database)
    ledger.recheck()  # evidence is judged again when loaded; a failing row sends its recipe dark
    return TrackerContext(
        settings=settings,
        database=database,
        key=load_key(settings),
        ledger=ledger,
        metrics=TrackerMetrics(database),
        public_keys=PublicKeyCache(),
        nonces=NonceBook(database, settings.timestamp_window_s),
    )


def is_openai_path(path: str) -> bool:
    return path == "/v1" or path.startswith("/v1/")


def _refusal(
    request: Request,
    status_code: int,
    reason: str,
    detail: str,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """The refusal shape the path documents: an API face's on its paths (Anthropic's,
    Ollama's), OpenAI's elsewhere under ``/v1``, the tracker's elsewhere."""
    face = _face_refusal(request, status_code, reason, detail, None, headers)
    if face is not None:
        return face
    if is_openai_path(request.url.path):
        return openai.openai_refusal_response(status_code, reason, detail, headers)
    return refusal_response(status_code, reason, detail, headers)


def _face_refusal(
    request: Request,
    status_code: int,
    reason: str,
    detail: str,
    param: str | None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse | None:
    """A refusal in the error shape of the API face whose path this is (None: no face's);
    the stable reason code rides in a header, as those shapes have no field for it."""
    shape = faces.error_shape(request.url.path)
    if shape is None:
        return None
    code = reason.replace("-", "_")
    return JSONResponse(
        shape(status_code, code, detail, param),
        status_code=status_code,
        headers={**(headers or {}), "X-Meshnet-Reason": code},
    )


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(errors.TrackerRefusal)
    async def on_refusal(request: Request, exc: errors.TrackerRefusal) -> JSONResponse:
        return _refusal(request, exc.status_code, exc.reason, exc.message)

    @app.exception_handler(GatewayError)
    async def on_gateway_error(request: Request, exc: GatewayError) -> JSONResponse:
        face = _face_refusal(
            request, exc.status_code, exc.code, exc.message, exc.param, exc.headers()
        )
        return face or openai.error_response(exc)

    @app.exception_handler(HTTPException)
    async def on_http(request: Request, exc: HTTPException) -> JSONResponse:
        face = _face_refusal(request, exc.status_code, *refusal_parts(exc), None, exc.headers)
        if face is not None:
            return face
        if is_openai_path(request.url.path):
            reason, detail = refusal_parts(exc)
            return openai.openai_refusal_response(exc.status_code, reason, detail, exc.headers)
        return http_refusal_response(exc)

    # Starlette's own 404 (no route) and 405 (wrong method) answer in the same shape.
    @app.exception_handler(StarletteHTTPException)
    async def on_starlette_http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _unmatched_response(request, exc)

    @app.exception_handler(RequestValidationError)
    async def on_invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err.get('loc', ()))}: {err.get('msg', '')}"
            for err in list(exc.errors())[:5]
        )
        return _refusal(request, 422, errors.INVALID_REQUEST, f"the request is invalid: {problems}")


def _unmatched_response(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    """Starlette's bare "Not Found" / "Method Not Allowed" as a sentence (OpenAI's shape
    under ``/v1``, where OpenAI clients read it)."""
    path = request.url.path
    shown = path if len(path) <= MAX_PATH_SHOWN else path[:MAX_PATH_SHOWN] + "…"
    if exc.status_code == 404:
        message = f"there is no {shown} on this tracker; /openapi.json lists its routes"
    elif exc.status_code == 405:
        message = f"{shown} does not take {request.method}; /openapi.json lists what it takes"
    else:
        message = str(exc.detail)
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        allowed = allowed_methods(request.app.openapi(), path)
        if allowed:
            headers["Allow"] = ", ".join(allowed)
    face = _face_refusal(request, exc.status_code, "unknown-url", message, None, headers)
    if face is not None:
        return face
    if is_openai_path(path):
        return openai.unknown_url_response(exc.status_code, message, headers)
    return http_refusal_response(HTTPException(exc.status_code, message, headers))


def _openapi_with_signed_bodies(app: FastAPI) -> dict[str, Any]:
    """The generated document plus the schemas of bodies read after signature checks."""
    if app.openapi_schema:
        return app.openapi_schema
    document = get_openapi(title=app.title, version=app.version, routes=app.routes)
    _, definitions = models_json_schema(
        [(model, "validation") for model in SIGNED_BODY_MODELS],
        ref_template="#/components/schemas/{model}",
    )
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    for name, schema in definitions.get("$defs", {}).items():
        schemas.setdefault(name, schema)
    app.openapi_schema = document_refusals(document)
    return document


def create_app(settings: Settings | None = None, context: TrackerContext | None = None) -> FastAPI:
    settings = settings or Settings()
    context = context or build_context(settings)
    routing = RouteServices(
        settings,
        context.database,
        context.key,
        context.ledger,
        context.rebalance,
        disputes=context.disputes,
    )
    app = FastAPI(
        title="MeshNet tracker",
        version="1",
        description="Registry, ledger and status of a MeshNet network.",
        lifespan=lifespan(routing),
    )
    app.state.tracker = context
    app.state.routing = routing
    routing.pruner.on_pruned = context.metrics.count_pruned  # counts on /metrics
    app.state.jobs = build_jobs_state(settings)
    app.state.gateway = Gateway(
        settings,
        context.database,
        routing.planner,
        routing.monitor,
        GatewayMetrics(context.metrics.registry),
        auditor=routing.auditor,
        credits=CreditLedger(context.database),
        departures=context.departures,
    )
    app.state.response_store = ResponseStore(
        ttl_s=settings.gateway_response_ttl_s, per_key=settings.gateway_responses_per_key
    )
    # Added first, so it runs inside the body limit (413 still comes first).
    app.add_middleware(HeartbeatShortcut)
    app.add_middleware(FailedAuthThrottle, per_minute=settings.failed_auth_per_minute_per_address)
    app.add_middleware(
        BodyLimitMiddleware,
        max_bytes=settings.max_body_bytes,
        path_limits=[(ARTIFACTS_PATH_PREFIX, app.state.jobs.settings.artifact_max_bytes)],
    )
    if settings.ollama_port:  # the second listener answers only Ollama's paths
        app.add_middleware(OllamaPortOnly, port=settings.ollama_port)
    _install_error_handlers(app)
    app.include_router(nodes.router)
    app.include_router(admin.router)
    app.include_router(state.router)
    app.include_router(route_requests.router)
    app.include_router(job_artifacts.router)
    app.include_router(jobs.router)
    app.include_router(openai.router)
    app.include_router(openai_responses.router)
    app.include_router(anthropic_messages.router)
    app.include_router(ollama.router)
    app.include_router(allocation.router)
    app.include_router(invites.router)
    app.include_router(network.router)
    app.include_router(chat.router)
    app.include_router(credits.router)
    if settings.embedded_relay:  # a small deployment's relay, on the tracker's own port
        mount_relay(
            app,
            RelaySettings(
                node_bytes_per_s=settings.relay_node_bytes_per_s,
                # The embedded relay holds the tracker's own cap on nodes per address.
                max_links_per_address=settings.max_nodes_per_address,
            ),
            context.metrics.registry,
            window_s=settings.timestamp_window_s,
        )
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    app.openapi = lambda: _openapi_with_signed_bodies(app)  # type: ignore[method-assign]
    log.info(
        # Spelled out: a bare "private=False" read as if --allow-private-endpoints were off.
        "tracker ready: db=%s join-token-required=%s private-endpoints-allowed=%s key=%s",
        context.database.engine.url.render_as_string(hide_password=True),
        settings.private,
        settings.allow_private_endpoints,
        context.key.public_key_b64,
    )
    _announce_gateway(app.state.gateway, settings)
    return app


def _announce_gateway(gateway: Gateway, settings: Settings) -> None:
    if gateway.keys.keys_configured():
        log.info("gateway: /v1 needs an API key (Authorization: Bearer)")
    else:
        log.warning(
            "gateway: no API keys configured, so /v1 answers only on loopback (this tracker "
            "listens on %s); issue keys with `meshnet-tracker keys add --label NAME`",
            settings.host,
        )


def app_from_env() -> FastAPI:
    """Factory for `meshnet-tracker serve --workers N`: each worker process reads the
    settings from the environment (the CLI exports its flags there) and behaves as one
    more replica over the same database."""
    return create_app(Settings())
