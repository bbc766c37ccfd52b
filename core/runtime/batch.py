"""Decode steps of several sessions as one forward: each weight is read once per batch.

A decode step on a CPU or a GPU is bound by reading the shard's weights, so B
sessions stepping together cost about one step, not B. ``step_batch`` takes one
new position for each of B sessions of one shard that start at the same layer;
each keeps its own position and cache (``Shard.run_layers_rows``), samples with
its own parameters and generator, and gets its own result or its own error:

* inputs are validated per session first; a bad one gets its error and the
  rest still run;
* if the batched forward itself fails, every member is retried alone, so a
  failure belongs to the session that causes it and no other;
* a session closed before its lock is taken gets ``SessionError`` and leaves
  the batch.

Greedy tokens equal those of the session's solo run: attention runs per row
over that row's own prefix, and only the projections see the other rows.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence

import torch

from core.errors import MeshnetError, ShapeError
from core.runtime.sampling import sample
from core.runtime.sessions import InferenceSession, StepResult

log = logging.getLogger(__name__)

Outcome = StepResult | MeshnetError


def step_batch(
    sessions: Sequence[InferenceSession], inputs: Sequence[torch.Tensor]
) -> list[Outcome]:
    """One position for each session; outcomes in the order given."""
    if len(sessions) != len(inputs):
        raise ShapeError(f"{len(sessions)} sessions but {len(inputs)} inputs")
    if len({id(s) for s in sessions}) != len(sessions):
        raise ShapeError("a session appears twice in one batch")
    if not sessions:
        return []
    if len(sessions) == 1:
        return [_solo(sessions[0], inputs[0])]
    shard, start = sessions[0].shard, sessions[0].start_layer
    for s in sessions:
        if (
            s.shard is not shard
            or s.start_layer != start
            or s.end_layer != sessions[0].end_layer
            or s.batch_size != 1
        ):
            raise ShapeError("a batch holds batch-1 sessions of one shard over the same layers")
    outcomes: list[Outcome | None] = [None] * len(sessions)
    order = sorted(range(len(sessions)), key=lambda i: sessions[i].session_id)
    with contextlib.ExitStack() as held:
        for i in order:  # one global lock order: batches never deadlock each other
            held.enter_context(sessions[i].lock)
        members: list[int] = []
        for i, (session, x) in enumerate(zip(sessions, inputs, strict=True)):
            try:
                if session.check(x) != 1:
                    raise ShapeError("a batched step carries exactly one position per session")
                members.append(i)
            except MeshnetError as exc:
                outcomes[i] = exc
        if len(members) > 1:
            try:
                with torch.inference_mode():
                    results = _forward([sessions[i] for i in members], [inputs[i] for i in members])
            except (RuntimeError, MeshnetError) as exc:
                log.warning(
                    "batched step of %d sessions failed (%s); stepping each alone",
                    len(members),
                    exc,
                )
                results = None
            if results is not None:
                for i, result in zip(members, results, strict=True):
                    sessions[i].advance(1, inputs[i], result)
                    outcomes[i] = result
                members = []
    for i in members:  # one member, or the batch failed: each on its own
        outcomes[i] = _solo(sessions[i], inputs[i])
    return [o for o in outcomes if o is not None]


def _solo(session: InferenceSession, x: torch.Tensor) -> Outcome:
    try:
        return session.step(x)
    except MeshnetError as exc:
        return exc


def _forward(sessions: list[InferenceSession], inputs: list[torch.Tensor]) -> list[StepResult]:
    first = sessions[0]
    shard = first.shard
    if first.takes_tokens:
        ids = torch.cat([x.reshape(1, 1) for x in inputs]).to(shard.device, torch.int64)
        x = shard.embed_tokens(ids)  # (B, 1, H)
    else:
        x = torch.cat([h.reshape(1, 1, -1) for h in inputs]).to(shard.device, shard.compute_dtype)
    positions = [s.position for s in sessions]
    h = shard.run_layers_rows(x, positions, [s.caches for s in sessions], first.start_layer)
    if not first.is_last:
        return [StepResult(hidden=h.narrow(0, i, 1)) for i in range(len(sessions))]
    logits = shard.head(h)[:, 0]  # (B, V)
    results = []
    for i, session in enumerate(sessions):
        # non-finite logits raise here; the solo retry gives the error to its own session
        token_ids, top_ids, top_lp = sample(
            logits.narrow(0, i, 1), session.sampling, session.generator
        )
        results.append(StepResult(token_ids=token_ids, top_ids=top_ids, top_logprobs=top_lp))
    return results
