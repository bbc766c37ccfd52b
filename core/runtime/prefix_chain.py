"""One session's prefix chain: the keys of the blocks it has computed so far.

Each successful step feeds its inputs (and, on a hop that is not the last, the
hidden states it replied) to the session's ``PrefixRecorder``; every block the
step completes comes back with its key, ready to be copied into the node's
``PrefixCache`` (``prefix_cache.py`` says how keys are made). Blocks may span
steps (a decode step adds one position), so the recorder keeps the running hash
and the replied hidden states of the block in progress.

A session rewound to an earlier position stops recording: the bytes of the
block it falls back into are gone, and a wrong key is worse than no key.
"""

from __future__ import annotations

import hashlib

import torch

from core.runtime.prefix_cache import BLOCK_POSITIONS

# A completed block: its index in the session, its key, the hidden states replied for it.
Completed = tuple[int, bytes, torch.Tensor | None]


class PrefixRecorder:
    def __init__(self, root: bytes, *, keep_hidden: bool) -> None:
        self.root = root
        self.keep_hidden = keep_hidden
        self.keys: list[bytes] = []
        self.stopped = False
        self._hasher = hashlib.sha256(root)
        self._filled = 0  # positions of the block in progress
        self._hidden: list[torch.Tensor] = []

    @property
    def positions(self) -> int:
        return len(self.keys) * BLOCK_POSITIONS + self._filled

    def restart(self, keys: list[bytes]) -> None:
        """The session now holds exactly these blocks (a prefix restored from the cache)."""
        self.keys = list(keys)
        self._hasher = hashlib.sha256(keys[-1] if keys else self.root)
        self._filled = 0
        self._hidden = []

    def stop(self) -> None:
        self.stopped = True
        self._hidden = []

    def record(self, rows: torch.Tensor, hidden: torch.Tensor | None) -> list[Completed]:
        """Feed one step's inputs, rows (T, bytes) uint8, and its replied hidden (T, H)."""
        if self.stopped:
            return []
        if self.keep_hidden and (hidden is None or hidden.shape[0] != rows.shape[0]):
            self.stop()  # nothing to reply on a hit: never store a block without it
            return []
        done: list[Completed] = []
        at, total = 0, int(rows.shape[0])
        while at < total:
            n = min(BLOCK_POSITIONS - self._filled, total - at)
            self._hasher.update(rows[at : at + n].numpy().data)
            if self.keep_hidden and hidden is not None:
                self._hidden.append(hidden[at : at + n])
            self._filled += n
            at += n
            if self._filled < BLOCK_POSITIONS:
                continue
            key = self._hasher.digest()
            replied = torch.cat(self._hidden) if self.keep_hidden else None  # a copy
            done.append((len(self.keys), key, replied))
            self.keys.append(key)
            self._hasher = hashlib.sha256(key)
            self._filled = 0
            self._hidden = []
        if len(self._hidden) > 1 or (self._hidden and self._hidden[0].shape[0] < total):
            # the block in progress: its own few rows, not views that keep a prefill's
            # whole reply alive until the block fills
            self._hidden = [torch.cat(self._hidden)]
        return done
