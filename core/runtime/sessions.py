"""Inference sessions over one shard: a preallocated KV cache per session.

``SessionManager.open(max_length)`` allocates the whole cache up front (and
refuses with CapacityError when it would not fit the budget), so a node refuses
a session rather than running out of memory in the middle of it. A step writes
its new keys/values into the cache in place and attends over the slice
``[:position]``: nothing proportional to the prefix is copied per step.

Bad input contract: every check runs before the cache is touched, and the
session's position only advances after the whole step succeeded, so a rejected
or failed step leaves the session exactly as it was — usable, not closed.

Threading: the manager's table of sessions is guarded by one lock; each session
has its own lock so steps of different sessions may run concurrently while two
steps (or a step and a close) of the same session never interleave.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from core.errors import (
    CapacityError,
    PositionError,
    RangeError,
    RuntimeInputError,
    SessionError,
    ShapeError,
)
from core.runtime.layers import LayerCache
from core.runtime.prefix_cache import (
    BLOCK_POSITIONS,
    HIDDEN,
    TOKENS,
    CachedBlock,
    PrefixCache,
    block_keys,
    chain_root,
    position_rows,
)
from core.runtime.prefix_chain import PrefixRecorder
from core.runtime.sampling import SamplingParams, sample
from core.runtime.shard import Shard
from core.runtime.speculation import accept_draft

__all__ = ["InferenceSession", "SamplingParams", "SessionManager", "StepResult"]

log = logging.getLogger(__name__)
MB = 1024 * 1024


def _unknown_session(session_id: str) -> SessionError:
    return SessionError(
        f"session {session_id} is unknown, closed or expired", reason="session-unknown"
    )


def _verified(logits: torch.Tensor, keep_logits: bool) -> StepResult:
    """A verify step's answer: the greedy token after each position, (B, T)."""
    token_ids = logits.argmax(dim=-1)
    if not bool(torch.isfinite(logits.gather(-1, token_ids[..., None])).all()):
        raise RuntimeInputError(
            "the model produced NaN/inf logits (overflow in the compute dtype?)",
            reason="non-finite-logits",
        )
    return StepResult(token_ids=token_ids, logits=logits if keep_logits else None)


def _mb(n_bytes: int) -> str:
    return f"{n_bytes / MB:.3g} MB"


@dataclass
class StepResult:
    hidden: torch.Tensor | None = None  # (B, T, H) compute dtype, when not last
    token_ids: torch.Tensor | None = None  # (B,) int64, when last; (B, T) for a verify step
    top_ids: torch.Tensor | None = None  # (B, k) int64
    top_logprobs: torch.Tensor | None = None  # (B, k) float32
    logits: torch.Tensor | None = None  # (B, T, V) float32 if asked


class InferenceSession:
    def __init__(
        self,
        shard: Shard,
        session_id: str,
        max_length: int,
        batch_size: int,
        sampling: SamplingParams,
        start_layer: int,
        clock: Callable[[], float],
        on_close: Callable[[InferenceSession], None],
        store_block: Callable[[bytes, CachedBlock, list[bytes]], None] | None = None,
        end_layer: int | None = None,
    ) -> None:
        self.shard = shard
        self.session_id = session_id
        self.max_length = max_length
        self.batch_size = batch_size
        self.sampling = sampling
        self.start_layer = start_layer
        # A session may stop inside the shard (an audit replay of a hop ending there): it
        # then answers hidden states, as a shard ending at that layer would.
        self.end_layer = shard.end if end_layer is None else end_layer
        self.is_last = shard.is_last and self.end_layer == shard.end
        self.position = 0
        self.takes_tokens = start_layer == 0
        self.reserved_bytes = (
            shard.kv_bytes_per_token(start_layer, self.end_layer) * max_length * batch_size
        )
        self._clock = clock
        self.last_used = clock()
        self._on_close = on_close
        self._lock = threading.Lock()
        self.closed = False
        cfg = shard.config
        n_layers = self.end_layer - start_layer
        # one allocation for all layers: (layers, B, 2 nkv, max_len, hd), keys first
        self._kv = torch.zeros(
            n_layers,
            batch_size,
            2 * cfg.num_kv_heads,
            max_length,
            cfg.head_dim,
            dtype=shard.kv_dtype,
            device=shard.device,
        )
        self._caches = [LayerCache.of(self._kv[i]) for i in range(n_layers)]
        # the prefix cache's view of this session (batch 1 only): None when caching is off
        self.prefix: PrefixRecorder | None = None
        self._store_block = store_block
        if store_block is not None and batch_size == 1 and self.end_layer == shard.end:
            kind = TOKENS if self.takes_tokens else HIDDEN
            root = chain_root(kind, start_layer, shard.compute_dtype)
            self.prefix = PrefixRecorder(root, keep_hidden=not self.is_last)
        self._generator: torch.Generator | None = None
        if self.is_last and not sampling.greedy:
            self._generator = torch.Generator(device=shard.device)
            if sampling.seed is not None:
                self._generator.manual_seed(sampling.seed)
            else:
                self._generator.seed()

    @property
    def caches(self) -> list[LayerCache]:
        """Per-layer views of the cache (for a batched step that holds this session's lock)."""
        return self._caches

    @property
    def generator(self) -> torch.Generator | None:
        return self._generator

    @property
    def lock(self) -> threading.Lock:
        """Held by a step; a batched step holds every member's lock (runtime/batch.py)."""
        return self._lock

    def check(self, inputs: torch.Tensor) -> int:
        """Validate a step's inputs (the caller holds ``lock``); the positions it holds."""
        return self._check(inputs)

    def advance(
        self,
        positions: int,
        inputs: torch.Tensor | None = None,
        result: StepResult | None = None,
    ) -> None:
        """A batched step succeeded for this session (the caller holds ``lock``); its
        inputs and result feed the prefix cache."""
        self.position += positions
        self.last_used = self._clock()
        if inputs is not None and result is not None:
            self._record(inputs, result)
        elif self.prefix is not None:
            self.prefix.stop()  # positions the cache never saw: no key past here

    # -- prefix cache ----------------------------------------------------------------------
    def prefix_keys(self, inputs: torch.Tensor) -> list[bytes]:
        """Keys of the full blocks a prefill at position 0 could take from the cache; the
        last position is always computed (the last hop samples from it)."""
        if self.prefix is None or self.position != 0:
            return []
        rows = position_rows(inputs, self.takes_tokens, self.shard.compute_dtype)
        return block_keys(self.prefix.root, rows, (int(rows.shape[0]) - 1) // BLOCK_POSITIONS)

    def restore_prefix(self, keys: list[bytes], blocks: list[CachedBlock]) -> torch.Tensor | None:
        """Copy cached blocks into positions [0, n * block) of a fresh session.

        Returns the hidden states replied for them (1, n * block, H) on a hop that is
        not the last, else None. Nothing changes unless the session is still at 0."""
        with self._lock:
            if self.closed or self.position != 0 or self.prefix is None or not blocks:
                return None
            replied = [b.hidden for b in blocks]
            if not self.is_last and any(h is None for h in replied):
                return None
            for i, block in enumerate(blocks):
                at = i * BLOCK_POSITIONS
                self._kv[:, 0, :, at : at + BLOCK_POSITIONS, :].copy_(block.kv)
            self.position = len(blocks) * BLOCK_POSITIONS
            self.last_used = self._clock()
            self.prefix.restart(keys[: len(blocks)])
            if self.is_last:
                return None
            return torch.cat([h for h in replied if h is not None]).unsqueeze(0)

    def _record(self, inputs: torch.Tensor, result: StepResult) -> None:
        """Offer the blocks a successful step completed to the cache (holding ``lock``).

        Never fails the step: a cache that cannot keep a block only misses later."""
        recorder, store = self.prefix, self._store_block
        if recorder is None or store is None or recorder.stopped:
            return
        try:
            rows = position_rows(inputs, self.takes_tokens, self.shard.compute_dtype)
            hidden = result.hidden[0] if result.hidden is not None else None
            done = recorder.record(rows, hidden)
            for index, key, replied in done:
                at = index * BLOCK_POSITIONS
                kv = self._kv[:, 0, :, at : at + BLOCK_POSITIONS, :].clone()
                store(key, CachedBlock(kv, replied), recorder.keys)
        except (RuntimeError, ValueError, MemoryError) as exc:
            log.warning("session %s stops feeding the prefix cache: %s", self.session_id, exc)
            recorder.stop()

    @property
    def kv_cache(self) -> torch.Tensor:
        """The session's whole preallocated cache: (layers, B, 2 nkv, max_len, hd)."""
        return self._kv

    # -- validation ------------------------------------------------------------------
    def _check(self, inputs: torch.Tensor) -> int:
        if self.closed:
            raise SessionError(f"session {self.session_id} is closed", reason="session-closed")
        if not isinstance(inputs, torch.Tensor):
            raise ShapeError(f"inputs must be a tensor, got {type(inputs).__name__}")
        B = self.batch_size
        if self.takes_tokens:
            if inputs.dim() != 2 or inputs.shape[0] != B:
                raise ShapeError(
                    f"token ids must have shape (batch {B}, T), got {tuple(inputs.shape)}"
                )
            if inputs.dtype not in (torch.int64, torch.int32):
                raise ShapeError(f"token ids must be int64, got {inputs.dtype}")
        else:
            H = self.shard.config.hidden_size
            if inputs.dim() != 3 or inputs.shape[0] != B or inputs.shape[2] != H:
                raise ShapeError(
                    f"hidden states must have shape (batch {B}, T, hidden {H}), "
                    f"got {tuple(inputs.shape)}"
                )
            if not inputs.dtype.is_floating_point:
                raise ShapeError(f"hidden states must be floating point, got {inputs.dtype}")
        T = int(inputs.shape[1])
        if T < 1:
            raise ShapeError("inputs hold 0 positions; a step needs at least 1")
        if self.position + T > self.max_length:
            raise PositionError(
                f"session {self.session_id} is at position {self.position} of max_length "
                f"{self.max_length}; {T} more positions would reach {self.position + T}"
            )
        if self.takes_tokens:
            vocab = self.shard.config.vocab_size
            lo, hi = int(inputs.min()), int(inputs.max())
            if lo < 0 or hi >= vocab:
                raise RuntimeInputError(
                    f"token ids must lie in [0, {vocab}), got [{lo}, {hi}]", reason="bad-token-id"
                )
        elif not bool(torch.isfinite(inputs).all()):
            raise RuntimeInputError(
                "hidden states contain NaN or infinity", reason="non-finite-input"
            )
        return T

    # -- compute ----------------------------------------------------------------------
    def step(
        self,
        inputs: torch.Tensor,
        *,
        return_logits: bool = False,
        verify: bool = False,
        draft: Sequence[int] | None = None,
    ) -> StepResult:
        """Compute `inputs` at the session's position. `verify` (a speculative step): the
        last shard answers its greedy token after every position, (B, T); with the
        `draft` (the step's last k inputs) the drafts it keeps and one more token,
        (1, kept + 1), by the session's sampling (runtime/speculation.py)."""
        with self._lock:
            T = self._check(inputs)
            if verify and self.is_last:
                self._check_draft(draft, T)
            self.last_used = self._clock()  # a long step is not idleness
            try:
                with torch.inference_mode():
                    result = self._forward(inputs, T, return_logits, verify, draft)
            except RuntimeError as exc:  # torch failure: position untouched, session usable
                raise RuntimeInputError(
                    f"step of {T} positions at {self.position} failed: {exc}", reason="step-failed"
                ) from exc
            self.position += T
            self.last_used = self._clock()
            self._record(inputs, result)
            log.debug(
                "session %s step T=%d -> position %d on [%d, %d)",
                self.session_id,
                T,
                self.position,
                self.start_layer,
                self.end_layer,
            )
            return result

    def _check_draft(self, draft: Sequence[int] | None, T: int) -> None:
        if draft is None:
            if not self.sampling.greedy:
                raise RuntimeInputError(
                    "a sampling session verifies only a step that names its drafted "
                    "tokens; send them, or open the session with temperature 0",
                    reason="bad-request",
                )
            return
        vocab = self.shard.config.vocab_size
        if not 1 <= len(draft) < T or any(not 0 <= t < vocab for t in draft):
            raise RuntimeInputError(
                f"a verify step of {T} positions drafts 1 to {T - 1} token ids in "
                f"[0, {vocab}); got {len(draft)}",
                reason="bad-request",
            )

    def _forward(
        self,
        inputs: torch.Tensor,
        T: int,
        return_logits: bool,
        verify: bool = False,
        draft: Sequence[int] | None = None,
    ) -> StepResult:
        shard = self.shard
        if self.takes_tokens:
            x = shard.embed_tokens(inputs.to(device=shard.device, dtype=torch.int64))
        else:
            x = inputs.to(device=shard.device, dtype=shard.compute_dtype)
        x = shard.run_layers(x, self.position, self._caches, self.start_layer)  # (B, T, H)
        if not self.is_last:
            return StepResult(hidden=x)
        if verify and draft is not None:
            logits = shard.head(x[:, T - len(draft) - 1 :])[0]  # the drafted places and after
            kept = accept_draft(logits, draft, self.sampling, self._generator)
            return StepResult(token_ids=torch.tensor([kept], dtype=torch.int64))
        if verify:
            return _verified(shard.head(x), return_logits)
        logits_all = shard.head(x) if return_logits else None  # (B, T, V)
        last = logits_all[:, -1] if logits_all is not None else shard.head(x[:, -1:])[:, 0]
        token_ids, top_ids, top_lp = sample(last, self.sampling, self._generator)
        return StepResult(
            token_ids=token_ids, top_ids=top_ids, top_logprobs=top_lp, logits=logits_all
        )

    def rewind(self, position: int) -> None:
        """Forget positions >= `position` (e.g. to replay a suffix after a failed hop).

        Costs nothing: later steps overwrite the cache from there on."""
        with self._lock:
            if self.closed:
                raise SessionError(f"session {self.session_id} is closed", reason="session-closed")
            if not 0 <= position <= self.position:
                raise PositionError(
                    f"cannot rewind session {self.session_id} to {position}; "
                    f"it holds positions [0, {self.position})"
                )
            if position != self.position and self.prefix is not None:
                self.prefix.stop()  # the rewound block's bytes are gone: no key past here
            self.position = position
            self.last_used = self._clock()

    def close(self) -> None:
        with self._lock:
            if self.closed:
                return
            self.closed = True
            self._caches = []
            self._kv = torch.empty(0)
        self._on_close(self)


class SessionManager:
    def __init__(
        self,
        shard: Shard,
        *,
        kv_budget_bytes: int | None = None,
        idle_timeout_s: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
        prefix_cache_bytes: int | None = None,
    ) -> None:
        """kv_budget_bytes=None: no budget of our own; an allocation the machine cannot
        satisfy is still refused with CapacityError.

        prefix_cache_bytes: the most the prefix cache (prefix_cache.py) may hold, inside
        the budget; None: half the budget, or no cache without a budget; 0: no cache."""
        self.shard = shard
        self.kv_budget_bytes = kv_budget_bytes
        self.idle_timeout_s = idle_timeout_s
        self.clock = clock
        self._lock = threading.RLock()
        self._sessions: dict[str, InferenceSession] = {}
        self._opening: set[str] = set()  # ids reserved, cache still being allocated
        self._reserved = 0
        if prefix_cache_bytes is None:
            prefix_cache_bytes = kv_budget_bytes // 2 if kv_budget_bytes else 0
        self.prefix_cache = PrefixCache(prefix_cache_bytes) if prefix_cache_bytes > 0 else None

    @property
    def reserved_bytes(self) -> int:
        with self._lock:
            return self._reserved

    @property
    def kv_bytes_per_token(self) -> int:
        """KV bytes one position of context costs a session from the shard's first layer."""
        return self.shard.kv_bytes_per_token()

    def sessions_that_fit(self, max_length: int) -> int | None:
        """How many more sessions of max_length the budget admits (None: no budget)."""
        if self.kv_budget_bytes is None:
            return None
        free = self.kv_budget_bytes - self.reserved_bytes
        return max(0, free // (self.kv_bytes_per_token * max_length))

    @property
    def open_count(self) -> int:
        with self._lock:
            return len(self._sessions)

    def open(
        self,
        max_length: int,
        *,
        batch_size: int = 1,
        sampling: SamplingParams | None = None,
        start_layer: int | None = None,
        session_id: str | None = None,
        end_layer: int | None = None,
    ) -> InferenceSession:
        """``end_layer``: stop there, inside the shard (an audit replay of a hop that
        ends at that layer); the session then answers hidden states."""
        shard = self.shard
        first = shard.start if start_layer is None else start_layer
        last = shard.end if end_layer is None else end_layer
        if not shard.start <= first < shard.end:
            raise RangeError(
                f"start_layer {first} is outside this shard's layers [{shard.start}, {shard.end})",
                reason="bad-start-layer",
            )
        if not first < last <= shard.end:
            raise RangeError(
                f"end_layer {last} is outside layers ({first}, {shard.end}] of this shard",
                reason="bad-start-layer",
            )
        limit = shard.config.max_position_embeddings
        if not 1 <= max_length <= limit:
            raise PositionError(
                f"max_length {max_length} must be in [1, {limit}] "
                "(the model's max_position_embeddings)"
            )
        if batch_size < 1:
            raise ShapeError(f"batch_size {batch_size} must be >= 1")
        need = shard.kv_bytes_per_token(first, last) * max_length * batch_size
        self.expire_idle()  # idle sessions give their memory back before we judge capacity
        sid = session_id or uuid.uuid4().hex
        with self._lock:
            if sid in self._sessions or sid in self._opening:
                raise SessionError(f"session {sid} is already open", reason="session-exists")
            cache = self.prefix_cache
            if cache is not None and self.kv_budget_bytes is not None:
                cache.shrink_to(self.kv_budget_bytes - self._reserved - need)  # sessions first
            if self.kv_budget_bytes is not None and self._reserved + need > self.kv_budget_bytes:
                free = self.kv_budget_bytes - self._reserved
                raise CapacityError(
                    f"a session of {max_length} positions needs {_mb(need)} of KV cache "
                    f"({need // (max_length * batch_size)} bytes per token); "
                    f"{_mb(free)} free of the {_mb(self.kv_budget_bytes)} budget "
                    f"({len(self._sessions)} sessions open); try a shorter max_length later"
                )
            self._reserved += need  # reserve before allocating outside the lock
            self._opening.add(sid)
        try:
            session = InferenceSession(
                shard,
                sid,
                max_length,
                batch_size,
                sampling or SamplingParams(),
                first,
                self.clock,
                self._forget,
                self._store_block if self.prefix_cache is not None else None,
                last,
            )
        except BaseException as exc:  # any failure at open gives its reservation back
            with self._lock:
                self._reserved -= need
                self._opening.discard(sid)
            if isinstance(exc, RuntimeError | MemoryError):
                raise CapacityError(f"allocating {_mb(need)} of KV cache failed: {exc}") from exc
            if isinstance(exc, ValueError | TypeError | OverflowError):
                raise RuntimeInputError(
                    f"the session's parameters were refused: {exc}", reason="bad-request"
                ) from exc
            raise
        with self._lock:
            self._opening.discard(sid)
            self._sessions[sid] = session
        log.info("opened session %s: max_length %d, %s KV", sid, max_length, _mb(need))
        return session

    def get(self, session_id: str) -> InferenceSession:
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                raise _unknown_session(session_id)
            idle = self.clock() - session.last_used
            if idle <= self.idle_timeout_s:
                return session
        session.close()
        raise SessionError(
            f"session {session_id} expired after {idle:.0f} s idle "
            f"(limit {self.idle_timeout_s:.0f} s)",
            reason="session-expired",
        )

    def close(self, session_id: str) -> None:
        with self._lock:
            session = self._sessions.get(session_id)
        if session is None:
            raise _unknown_session(session_id)
        session.close()

    def expire_idle(self) -> list[str]:
        now = self.clock()
        with self._lock:
            stale = [s for s in self._sessions.values() if now - s.last_used > self.idle_timeout_s]
        for session in stale:
            log.info(
                "session %s expired after %.0f s idle", session.session_id, now - session.last_used
            )
            session.close()
        return [s.session_id for s in stale]

    def close_all(self) -> None:
        with self._lock:
            sessions = list(self._sessions.values())
        for session in sessions:
            session.close()

    def restore_prefix(
        self, session: InferenceSession, inputs: torch.Tensor
    ) -> tuple[int, torch.Tensor | None]:
        """Give a fresh session the longest cached prefix of a prefill's ``inputs``.

        Returns how many positions it now holds (0: nothing cached, compute them all) and,
        on a hop that is not the last, the hidden states to reply for them."""
        cache = self.prefix_cache
        if cache is None:
            return 0, None
        keys = session.prefix_keys(inputs)
        blocks = cache.match(keys) if keys else []
        if not blocks:
            return 0, None
        replied = session.restore_prefix(keys, blocks)
        if session.position == 0:  # refused: the session moved meanwhile
            return 0, None
        log.debug("session %s took %d cached positions", session.session_id, session.position)
        return session.position, replied

    def _store_block(self, key: bytes, block: CachedBlock, chain: list[bytes]) -> None:
        cache = self.prefix_cache
        if cache is None:
            return
        with self._lock:  # the budget's room and the insert agree: sessions come first
            room = cache.capacity_bytes
            if self.kv_budget_bytes is not None:
                room = self.kv_budget_bytes - self._reserved
            cache.put(key, block, room, keep=chain)
        cache.refresh(chain)

    def _forget(self, session: InferenceSession) -> None:
        with self._lock:
            if self._sessions.get(session.session_id) is session:
                del self._sessions[session.session_id]
                self._reserved -= session.reserved_bytes
