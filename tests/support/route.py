"""Drive a route of hops from the client side: prefill, decode, receipts.

The tracker hands out a signed ticket and the hops' endpoints; this module
opens one WebSocket per hop (``HopClient``), passes each hop's hidden states to
the next, and reads the sampled token from the last. The end-to-end tests and
the benchmarks use it (so it lives here, not in core/); the tracker has its own
independent client.
"""

from __future__ import annotations

import functools
import ssl
import time
from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import torch

from core.dataplane import frames
from core.errors import ProtocolError, TrackerCallFailed
from tests.support.hop_client import HopClient


@dataclass(frozen=True)
class RouteHop:
    node_id: str
    endpoint: str
    start: int
    end: int
    effective_start: int
    tls_pin: str = ""  # the node's certificate pin (docs/wire.md#tls)


@dataclass
class StepTiming:
    """Wall time of one hop's step as the client saw it, and the node's compute time."""

    wall_ms: list[float] = field(default_factory=list)
    compute_ms: list[float] = field(default_factory=list)

    def overhead_ms(self) -> list[float]:
        return [w - c for w, c in zip(self.wall_ms, self.compute_ms, strict=True)]


class RouteSession:
    def __init__(
        self,
        hops: Sequence[RouteHop],
        signed_ticket: Mapping[str, Any],
        *,
        max_length: int,
        sampling: Mapping[str, Any] | None = None,
    ) -> None:
        if not hops:
            raise ProtocolError("a route needs at least one hop")
        self.hops = list(hops)
        self._ticket = signed_ticket
        self._max_length = max_length
        self._sampling = dict(sampling or {"temperature": 0.0})
        self._clients = [HopClient(hop.endpoint, tls_pin=hop.tls_pin) for hop in self.hops]
        self.position = 0
        self.timings = [StepTiming() for _ in self.hops]
        # per hop: positions of the last step it took from its prefix cache
        self.cached = [0 for _ in self.hops]

    async def __aenter__(self) -> RouteSession:
        await self.open()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        for client in self._clients:
            await client.abort()

    async def open(self) -> None:
        last = len(self._clients) - 1
        for index, client in enumerate(self._clients):
            sampling = self._sampling if index == last else None
            await client.open(self._ticket, self._max_length, sampling)

    async def step(self, token_ids: Sequence[int]) -> int:
        """Feed ``token_ids`` at the current position through every hop; the next token."""
        position = {frames.POSITION_KEY: str(self.position)}
        ids = torch.tensor([list(token_ids)], dtype=torch.int64)
        data = frames.encode_frame({frames.INPUT_IDS: ids}, position)
        last = len(self._clients) - 1
        for index, client in enumerate(self._clients):
            began = time.perf_counter()
            reply = await client.step_raw(data)
            self.timings[index].wall_ms.append((time.perf_counter() - began) * 1000)
            if index < last:
                # Hidden states go on to the next hop as bytes; the node checks them.
                data, header = frames.reframe(reply, position, len(reply))
                if set(header.tensors) != {frames.HIDDEN}:
                    raise ProtocolError(f"hop {index} replied {sorted(header.tensors)}, not hidden")
                metadata = header.metadata
            else:
                frame = frames.decode_frame(reply, len(reply))
                if frames.TOKEN_IDS not in frame.tensors:
                    raise ProtocolError("the last hop returned no token")
                metadata = frame.metadata
            self.timings[index].compute_ms.append(_compute_ms(metadata, index))
            self.cached[index] = int(metadata.get(frames.CACHED_KEY, "0"))
        token = frame.tensors[frames.TOKEN_IDS]
        if token.numel() != 1:
            raise ProtocolError(f"the last hop returned {token.numel()} tokens for one sequence")
        self.position += len(token_ids)
        return int(token.reshape(-1)[0])

    async def close(self) -> list[dict[str, Any]]:
        """Close every hop; their signed receipts in route order."""
        return [await client.close() for client in self._clients]

    async def generate(
        self, prompt_ids: Sequence[int], max_new_tokens: int, stop_ids: Collection[int] = ()
    ) -> AsyncIterator[int]:
        """Prefill the prompt, then decode one token per step until a stop token or the limit."""
        if len(prompt_ids) + max_new_tokens > self._max_length:
            raise ProtocolError(
                f"prompt ({len(prompt_ids)} tokens) plus {max_new_tokens} new tokens exceeds "
                f"the session's max_length {self._max_length}"
            )
        token = await self.step(prompt_ids)
        for produced in range(max_new_tokens):
            if token in stop_ids:
                return
            yield token
            if produced + 1 < max_new_tokens:
                token = await self.step([token])


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One verifying TLS context for every route request: building one reads the whole CA
    bundle (~60 ms of CPU, on the event loop), which httpx does per client otherwise."""
    return httpx.create_ssl_context()


async def request_route(tracker_url: str, recipe: Mapping[str, Any]) -> dict[str, Any]:
    """Ask the tracker for a serving route (hops + signed ticket) for a certified recipe."""
    async with httpx.AsyncClient(base_url=tracker_url, timeout=30, verify=_tls_context()) as http:
        try:
            response = await http.post(
                "/api/v1/routes",
                json={
                    "model_artifact_digest": recipe["model_artifact_digest"],
                    "runtime_recipe_digest": recipe["runtime_recipe_digest"],
                    "purpose": "serve",
                },
            )
        except httpx.HTTPError as exc:
            raise TrackerCallFailed(f"cannot reach the tracker at {tracker_url}: {exc}") from exc
    if response.status_code != 200:
        raise TrackerCallFailed(
            f"the tracker gave no route ({response.status_code}): {response.text[:300]}",
            reason="no-route",
        )
    return dict(response.json())


def _compute_ms(metadata: Mapping[str, str], index: int) -> float:
    try:
        return float(metadata.get(frames.COMPUTE_MS_KEY, 0.0))
    except ValueError as exc:
        raise ProtocolError(f"hop {index} reported a compute time that is not a number") from exc


def hops_from_route(route: Mapping[str, Any]) -> list[RouteHop]:
    """Hops as the tracker's route answer lists them."""
    hops = []
    for hop in route["hops"]:
        hops.append(
            RouteHop(
                node_id=str(hop["node_id"]),
                endpoint=str(hop["endpoint"]),
                start=int(hop["start"]),
                end=int(hop["end"]),
                effective_start=int(hop.get("effective_start", hop["start"])),
                tls_pin=str(hop.get("tls_pin") or ""),
            )
        )
    return hops
