"""Which layers this node serves when none were given: ask the tracker, else fit locally.

A range chosen from the local machine alone piles nodes onto the same layers
while others go uncovered, so a node started without ``--layers`` tells the
tracker how many layers fit in its memory and how fast it measured itself,
and serves the range the tracker answers (``GET /api/v1/allocation``) with the
tracker's sentence. When the tracker cannot answer (unreachable, an older
tracker, an answer that does not fit this copy of the model) the node falls
back to the largest range that fits locally, and says so.

Memory is counted in layers that fit *anywhere* in the model: a range at
either end also holds the embedding or the LM head, and the tracker may send
the node to either end. The doctor checks the chosen range again before
loading anything.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.doctor.capability import CapabilityReport, saved_reports
from core.doctor.hardware import DEFAULT_KV_TOKENS, detect_device
from core.doctor.hardware import suggest_layer_range as fit_locally
from core.doctor.hardware_report import max_layers_anywhere, model_shapes, recipe_footprint
from core.errors import MeshnetError, TooLittleMemory, TrackerCallFailed, TrackerUnreachable
from core.network.tracker_client import TrackerClient
from core.recipes.catalogue import load_catalogue

__all__ = ["Capacity", "LayerChoice", "choose_layers", "max_layers_anywhere", "measure_capacity"]

log = logging.getLogger(__name__)

SOURCE_TRACKER = "tracker"
SOURCE_LOCAL = "local"
REASON_TOO_LITTLE_MEMORY = TooLittleMemory.reason
# A loaded tracker (or a busy machine) can miss one request; falling back to the local
# fit at once would pile this node onto layer 0 next to others. Retry before that.
ALLOCATION_RETRY_DELAYS_S = (1.0, 2.0, 4.0)


@dataclass(frozen=True)
class Capacity:
    """What the tracker is told: the model, its size, the room here and the speed measured."""

    model_id: str
    layer_count: int
    max_layers: int  # layers that fit wherever in the model they lie
    recipe_id: str
    local: tuple[int, int] | None  # the largest range that fits, for the fallback
    speed: float | None  # layer-tokens/s from the newest saved report, if any


@dataclass(frozen=True)
class LayerChoice:
    layers: tuple[int, int]
    sentence: str
    source: str  # "tracker" | "local"


def measured_speed(model_id: str, recipe_id: str, directory: Path | None = None) -> float | None:
    """Layer-tokens/s of the newest passing saved report for this model and recipe."""
    newest: tuple[float, float] | None = None
    for path in saved_reports(model_id, recipe_id, directory):
        try:
            report = CapabilityReport.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, MeshnetError):
            continue
        if not report.passed or not report.tokens_per_second:
            continue
        speed = report.tokens_per_second * (report.shard.end - report.shard.start)
        if newest is None or report.validated_at > newest[0]:
            newest = (report.validated_at, speed)
    return None if newest is None else newest[1]


def measure_capacity(
    model: str | None,
    device: str | None = None,
    memory_cap_bytes: int | None = None,
    recipe_id: str | None = None,
    kv_tokens: int = DEFAULT_KV_TOKENS,
) -> Capacity:
    """Read the model's sizes (headers only) and this machine's free memory."""
    model_id, config, shapes, _imported = model_shapes(model)
    found = detect_device(device, memory_cap_bytes)
    recipe = load_catalogue().choose(recipe_id, config.architecture, found.kind)
    footprint = recipe_footprint(shapes, config, recipe)
    return Capacity(
        model_id=model_id,
        layer_count=config.num_layers,
        max_layers=max_layers_anywhere(footprint, found.free_bytes, kv_tokens),
        recipe_id=recipe.recipe_id,
        local=fit_locally(footprint, found.free_bytes, kv_tokens),
        speed=measured_speed(model_id, recipe.recipe_id),
    )


def choose_layers(
    client: TrackerClient,
    capacity: Capacity,
    node_id: str,
    *,
    retry_delays_s: tuple[float, ...] = ALLOCATION_RETRY_DELAYS_S,
    sleep: Callable[[float], None] = time.sleep,
) -> LayerChoice:
    """The tracker's range for this capacity, or the local fit when it cannot answer.

    An unreachable tracker is asked again after each of ``retry_delays_s``
    before the local fit is used. Raises TooLittleMemory when the tracker (or,
    without it, the local fit) finds no useful range; its message is the
    sentence to show.
    """
    for attempt, delay in enumerate((*retry_delays_s, None)):
        try:
            answer = client.allocation(
                model=capacity.model_id,
                layer_count=capacity.layer_count,
                max_layers=capacity.max_layers,
                speed=capacity.speed,
                recipe=capacity.recipe_id,
                node_id=node_id,
            )
            break
        except TrackerUnreachable as exc:
            if delay is None:
                return _local(capacity, f"the tracker could not suggest a range ({exc})")
            log.info(
                "asking the tracker for a range again in %.0fs (try %d): %s",
                delay,
                attempt + 1,
                exc,
            )
            sleep(delay)
        except TrackerCallFailed as exc:
            return _local(capacity, f"the tracker could not suggest a range ({exc})")
    if not answer.get("fits"):
        raise TooLittleMemory(str(answer.get("sentence") or "no useful range fits here"))
    start, end = answer.get("start"), answer.get("end")
    if not (
        isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= capacity.layer_count
    ):
        return _local(capacity, f"the tracker answered a range this model lacks ({start}, {end})")
    return LayerChoice((start, end), str(answer.get("sentence") or ""), SOURCE_TRACKER)


def _local(capacity: Capacity, why: str) -> LayerChoice:
    if capacity.local is None:
        raise TooLittleMemory(
            f"{why[0].upper()}{why[1:]}, and not even one layer of {capacity.model_id} fits in "
            "this computer's free memory. Close other programs or raise the memory cap."
        )
    start, end = capacity.local
    log.warning("choosing layers locally: %s", why)
    return LayerChoice(
        capacity.local,
        f"{why[0].upper()}{why[1:]}; serving layers {start}–{end} of {capacity.model_id}, "
        "the largest range that fits in this computer's memory.",
        SOURCE_LOCAL,
    )


def should_move(
    suggested: tuple[int, int] | None,
    current: tuple[int, int] | None,
    *,
    pinned: bool,
    open_sessions: int,
    serving_for_s: float,
    dwell_s: float,
) -> tuple[bool, str]:
    """Whether to act on the tracker's move suggestion now, and why (not).

    The node's half of the hysteresis: never while a session is open (a move
    reloads the shard), never sooner than ``dwell_s`` after the last start, and
    never when the contributor chose the layers themselves.
    """
    if suggested is None or suggested == current:
        return False, "no move suggested"
    if pinned:
        return False, "the layers were chosen with --layers; the node stays on them"
    if open_sessions:
        return False, f"{open_sessions} session(s) open; moving waits until they end"
    if serving_for_s < dwell_s:
        return False, f"serving this range for {serving_for_s:.0f}s, under the {dwell_s:.0f}s dwell"
    return True, "idle and past the dwell time"
