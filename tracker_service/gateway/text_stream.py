"""Token ids -> text deltas for streaming, with stop strings.

Decoding one token at a time breaks multi-byte characters and merges that
span tokens, so the whole answer is decoded each step and only the new
suffix is emitted. Text that could still turn into a stop string (or ends in
an incomplete character) is held back until it cannot.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

REPLACEMENT = "\ufffd"


class TextStream:
    def __init__(self, decode: Callable[[Sequence[int]], str], stop: Sequence[str] = ()) -> None:
        self._decode = decode
        self._stop = [s for s in stop if s]
        self._ids: list[int] = []
        self._emitted = 0  # characters of the decoded text already handed out
        self.stopped = False  # a stop string was found; the answer ends before it
        self.matched: str | None = None  # which one (Anthropic's stop_sequence names it)
        self.text = ""

    def push(self, token_id: int) -> str:
        """Add one generated token; the text that is now safe to show."""
        if self.stopped:
            return ""
        self._ids.append(token_id)
        text = self._decode(self._ids)
        cut = self._first_stop(text)
        if cut is not None:
            self.stopped = True
            return self._emit(text[:cut])
        safe = len(text)
        if text.endswith(REPLACEMENT):
            safe = len(text) - 1  # an incomplete character: wait for its other bytes
        safe = min(safe, self._hold_back(text))
        return self._emit(text[:safe])

    def finish(self) -> str:
        """Whatever was held back, once no more tokens will come."""
        if self.stopped:
            return ""
        return self._emit(self._decode(self._ids))

    def _emit(self, text: str) -> str:
        delta = text[self._emitted :] if len(text) > self._emitted else ""
        self._emitted = max(self._emitted, len(text))
        self.text = text[: self._emitted]
        return delta

    def _first_stop(self, text: str) -> int | None:
        # Search from a little before what was emitted: a stop may straddle the boundary.
        start = max(0, self._emitted - max((len(s) for s in self._stop), default=0))
        found = [(i, s) for s in self._stop if (i := text.find(s, start)) != -1]
        if not found:
            return None
        cut, self.matched = min(found)
        return cut

    def _hold_back(self, text: str) -> int:
        """Where text that might be the start of a stop string begins (len(text) if none)."""
        cut = len(text)
        for stop in self._stop:
            for size in range(min(len(stop) - 1, len(text)), 0, -1):
                if text.endswith(stop[:size]):
                    cut = min(cut, len(text) - size)
                    break
        return cut
