"""The app's reads of a tracker: is this URL a MeshNet tracker, and which recipes it knows.

Both calls block (one GET of ``/api/v1/state``), so the GUI runs them in the
background. Every failure is one `TrackerReadError` whose message is a sentence
saying what to do, with a stable `reason` code: httpx's errors are mapped here, at
the one place they enter, so the GUI never sees a transport exception.

The state is checked by its shape rather than parsed with the tracker's own pydantic
schemas: the app must not import ``tracker_service`` (nor its web stack), and a
tracker of another version should still be recognised by the fields the app reads.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from app.errors import TrackerReadError
from app.settings_model import tracker_url_problem
from app.texts import number, text
from core.network.tls_trust import tracker_verify

log = logging.getLogger(__name__)

STATE_PATH = "/api/v1/state"


@dataclass(frozen=True)
class TrackerCheck:
    ok: bool
    sentence: str


@dataclass(frozen=True)
class RecipeRow:
    status: str  # "dark" or "certified"
    detail: str
    artifact_id: str
    recipe_id: str
    recipe_version: str
    layer_count: int
    model_artifact_digest: str
    runtime_recipe_digest: str
    certified_at: float | None
    certified_node_count: int | None
    last_certification_failure: str | None


def _base(url: str) -> str:
    problem = tracker_url_problem(url)
    if problem is not None:
        raise TrackerReadError(problem, reason="bad-url")
    return url.strip().rstrip("/")


def _request(
    base: str,
    path: str,
    timeout_s: float,
    transport: httpx.BaseTransport | None,
    params: Mapping[str, Any] | None = None,
) -> httpx.Response:
    """One GET; transport failures become TrackerReadError sentences here."""
    try:
        with httpx.Client(
            timeout=timeout_s,
            transport=transport,
            follow_redirects=True,
            verify=tracker_verify(),  # the OS's CAs or MESHNET_CA_FILE's (core.network.tls_trust)
        ) as client:
            return client.get(base + path, params=params, headers={"Accept": "application/json"})
    except httpx.ConnectError as exc:
        said = str(exc).lower()
        if "refused" in said or "errno 111" in said or "10061" in said:
            raise TrackerReadError(
                text("tracker.refused", url=base),
                reason="connection-refused",
            ) from exc
        raise TrackerReadError(
            text("tracker.unreachable", url=base, error=exc),
            reason="unreachable",
        ) from exc
    except httpx.TimeoutException as exc:
        raise TrackerReadError(
            text("tracker.timeout", url=base, seconds=f"{timeout_s:g}"),
            reason="timeout",
        ) from exc
    except httpx.HTTPError as exc:
        raise TrackerReadError(
            text("tracker.unreadable", url=base, error=exc),
            reason="unreachable",
        ) from exc


def _get_state(url: str, timeout_s: float, transport: httpx.BaseTransport | None) -> Any:
    base = _base(url)
    response = _request(base, STATE_PATH, timeout_s, transport)
    if response.status_code == 404:
        raise _not_meshnet(base, text("tracker.why.no-state-page"))
    if response.status_code >= 400:
        raise TrackerReadError(
            text(
                "tracker.http",
                url=base,
                status=response.status_code,
                phrase=response.reason_phrase,
            ),
            reason="http-error",
        )
    try:
        return response.json()
    except ValueError as exc:
        raise _not_meshnet(base, text("tracker.why.not-json")) from exc


def _not_meshnet(base: str, why: str) -> TrackerReadError:
    return TrackerReadError(
        text("tracker.not-meshnet", url=base, why=why),
        reason="not-meshnet",
    )


_STATE_LISTS = ("models", "recipes", "nodes")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _state_problem(state: Any) -> str | None:
    if not isinstance(state, Mapping):
        return text("tracker.why.not-state")
    if not _is_number(state.get("generated_at")):
        return text("tracker.why.no-time")
    for key in _STATE_LISTS:
        if not isinstance(state.get(key), list):
            return text("tracker.why.no-list", name=key)
    if not isinstance(state.get("nodes_total_live"), int):
        return text("tracker.why.no-count")
    return None


def check_tracker(
    url: str, *, timeout_s: float = 5.0, transport: httpx.BaseTransport | None = None
) -> TrackerCheck:
    """Reachable and shaped like a MeshNet tracker's state; raises TrackerReadError if not."""
    state = _get_state(url, timeout_s, transport)
    problem = _state_problem(state)
    if problem is not None:
        raise _not_meshnet(_base(url), problem)
    live = state["nodes_total_live"]
    recipes = len(state["recipes"])
    nodes = text("tracker.nodes.one") if live == 1 else text("tracker.nodes", count=number(live))
    known = (
        text("tracker.recipes.one")
        if recipes == 1
        else text("tracker.recipes", count=number(recipes))
    )
    return TrackerCheck(ok=True, sentence=text("tracker.connected", nodes=nodes, recipes=known))


def _optional(value: Any, kind: type | tuple[type, ...]) -> Any:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, kind):
        raise TypeError(value)
    return value


def _row(item: Any) -> RecipeRow:
    if not isinstance(item, Mapping):
        raise TypeError(item)
    strings = {
        key: item[key]
        for key in (
            "status",
            "detail",
            "artifact_id",
            "recipe_id",
            "recipe_version",
            "model_artifact_digest",
            "runtime_recipe_digest",
        )
    }
    if not all(isinstance(v, str) for v in strings.values()):
        raise TypeError(strings)
    layer_count = item["layer_count"]
    if isinstance(layer_count, bool) or not isinstance(layer_count, int):
        raise TypeError(layer_count)
    certified_at = _optional(item.get("certified_at"), (int, float))
    return RecipeRow(
        layer_count=layer_count,
        certified_at=None if certified_at is None else float(certified_at),
        certified_node_count=_optional(item.get("certified_node_count"), int),
        last_certification_failure=_optional(item.get("last_certification_failure"), str),
        **strings,
    )


def fetch_recipes(
    url: str, *, timeout_s: float = 10.0, transport: httpx.BaseTransport | None = None
) -> list[RecipeRow]:
    """The tracker's recipes, dark and certified, in the tracker's order."""
    state = _get_state(url, timeout_s, transport)
    problem = _state_problem(state)
    if problem is not None:
        raise _not_meshnet(_base(url), problem)
    try:
        return [_row(item) for item in state["recipes"]]
    except (KeyError, TypeError) as exc:
        log.warning("tracker %s: unreadable recipe %r", url, exc)
        raise _not_meshnet(_base(url), text("tracker.why.recipes")) from exc


ALLOCATION_PATH = "/api/v1/allocation"


@dataclass(frozen=True)
class TrackerAllocation:
    """The range the tracker suggests for this computer, and why."""

    fits: bool
    start: int | None
    end: int | None
    sentence: str


def fetch_allocation(
    url: str,
    *,
    model: str,
    layer_count: int,
    max_layers: int,
    recipe: str | None = None,
    timeout_s: float = 5.0,
    transport: httpx.BaseTransport | None = None,
) -> TrackerAllocation:
    """Which layers the swarm needs from a computer with room for ``max_layers``.

    Raises TrackerReadError when the tracker cannot say (unreachable, an older
    tracker without ``/api/v1/allocation``, an answer of another shape).
    """
    base = _base(url)
    params: dict[str, Any] = {"model": model, "layer_count": layer_count, "max_layers": max_layers}
    if recipe:
        params["recipe"] = recipe
    response = _request(base, ALLOCATION_PATH, timeout_s, transport, params)
    if response.status_code == 404:
        raise TrackerReadError(
            text("tracker.no-suggestion", url=base),
            reason="no-suggestion",
        )
    if response.status_code >= 400:
        detail, status = "", response.status_code
        with contextlib.suppress(ValueError, AttributeError):
            detail = str(response.json().get("detail") or "")
        raise TrackerReadError(
            text("tracker.suggestion.failed.detail", url=base, status=status, detail=detail)
            if detail
            else text("tracker.suggestion.failed", url=base, status=status),
            reason="http-error",
        )
    try:
        body = response.json()
        fits, sentence = body["fits"], body["sentence"]
        start, end = body.get("start"), body.get("end")
        if not isinstance(fits, bool) or not isinstance(sentence, str):
            raise TypeError(body)
        if fits and not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end):
            raise TypeError(body)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _not_meshnet(base, text("tracker.why.allocation")) from exc
    return TrackerAllocation(fits, start if fits else None, end if fits else None, sentence)


NETWORK_PATH = "/api/v1/network"


@dataclass(frozen=True)
class ServedModel:
    """One model the network answers questions with (GET /api/v1/network's ``models``)."""

    artifact_id: str
    ready: bool
    computers: int


@dataclass(frozen=True)
class NetworkSummary:
    name: str
    description: str
    operator: str
    models: tuple[ServedModel, ...]


def fetch_network(
    url: str, *, timeout_s: float = 10.0, transport: httpx.BaseTransport | None = None
) -> NetworkSummary:
    """What the network says it is and serves, for "What this network serves".

    Only shown, never trusted for joining: the join page checks the signed answer."""
    base = _base(url)
    response = _request(base, NETWORK_PATH, timeout_s, transport)
    if response.status_code >= 400:
        raise TrackerReadError(
            text("tracker.http.network", url=base, status=response.status_code),
            reason="http-error",
        )
    try:
        data = response.json()
        models = tuple(
            ServedModel(
                artifact_id=str(item["artifact_id"]),
                ready=bool(item.get("ready")),
                computers=int(item.get("computers") or 0),
            )
            for item in data.get("models") or []
        )
        return NetworkSummary(
            name=str(data.get("name") or ""),
            description=str(data.get("description") or ""),
            operator=str(data.get("operator") or ""),
            models=models,
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _not_meshnet(base, text("tracker.why.network")) from exc
