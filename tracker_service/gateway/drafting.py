"""Drafts for speculative decoding: prompt lookup, with a draft length that adapts.

Over the internet a decode step costs a round trip to every hop, whatever the
compute. A speculative step sends the next token with a few drafted ones; the
last hop answers its greedy token after each position (docs/wire.md#speculative-steps),
the gateway keeps the drafts that match and the first token that does not, and
one round trip yields several tokens. Greedy output is unchanged: every kept
token is the one plain decoding would have produced.

Why prompt lookup drafts: the gateway holds no model (the tracker runs no shard
runtime); the default model is already the smallest of its family, so no
smaller drafter shares its tokenizer; and drafting with the route's own first
layers costs a round trip per drafted token, the very cost speculation saves.
Looking the context's last n-gram up earlier in the context costs a dict read
per step and drafts well where answers repeat text they have seen: code edits,
summaries, quotes, structured output, and the loops small greedy models fall into.
Where the context never repeats, no draft is found and the step is a plain one.
"""

from __future__ import annotations

from collections.abc import Sequence

MAX_NGRAM = 3  # the longest suffix looked up: longer ones rarely recur
# the shortest: a single token recurs everywhere and what followed it once is rarely
# what follows it now (measured: 7 % of such drafts kept on a story, benchmarks/wan_decode.py)
MIN_NGRAM = 2
FIRST_DRAFT = 4
MAX_DRAFT = 8  # positions a verify step adds; each costs every hop a little compute


class PromptLookup:
    """Drafts from the context itself: what followed the latest earlier occurrence of
    the context's last n-gram (longest first). Indexes the context as it grows."""

    def __init__(self, max_ngram: int = MAX_NGRAM, min_ngram: int = MIN_NGRAM) -> None:
        self.max_ngram = max_ngram
        self.min_ngram = min_ngram
        self._indexed = 0  # n-grams ending at or before this position are indexed
        self._latest: dict[tuple[int, ...], int] = {}  # n-gram -> where it last ended

    def draft(self, context: Sequence[int], length: int) -> list[int]:
        """Up to `length` tokens that may follow `context` (empty: no guess)."""
        if length < 1:
            return []
        # index every n-gram that has a token after it (the context's own suffix has not)
        while self._indexed < len(context) - 1:
            end = self._indexed + 1
            for n in range(self.min_ngram, min(self.max_ngram, end) + 1):
                self._latest[tuple(context[end - n : end])] = end
            self._indexed = end
        for n in range(min(self.max_ngram, len(context)), self.min_ngram - 1, -1):
            found = self._latest.get(tuple(context[-n:]))
            if found is not None:
                return list(context[found : found + length])
        return []


class DraftLength:
    """How many tokens to draft: longer after a draft kept whole, shorter after a
    miss (the schedule of transformers' assisted generation), so a context that
    repeats gets long drafts and one that does not costs the hops little."""

    def __init__(self, first: int = FIRST_DRAFT, most: int = MAX_DRAFT) -> None:
        self.most = most
        self.now = first

    def update(self, accepted: int, drafted: int) -> None:
        if drafted and accepted == drafted:
            self.now = min(self.most, self.now + 2)
        else:
            self.now = max(1, self.now - 1)


class SpeedGate:
    """Whether to speculate on this route now: whichever kind of step has lately served
    a token faster. A speculative step pays off when the route keeps enough drafts for
    what the step costs; that depends on the text (an edit repeats its input, a story
    does not), on the links (each kept draft spares a round trip) and on the nodes' load
    (a verify step runs alone, outside a node's decode batch), so it is measured, not
    guessed: seconds per token of each kind, smoothed, and now and then a step of the
    kind not chosen, so the estimate that lost follows the route as things change."""

    def __init__(self, smoothing: float = 0.3, explore_every: int = 16) -> None:
        self.smoothing = smoothing
        self.explore_every = explore_every
        self.per_token_s: dict[bool, float] = {}  # speculative? -> seconds per token
        self._since_explored = 0

    def observe(self, speculative: bool, step_s: float, tokens: int) -> None:
        per_token = step_s / max(1, tokens)
        known = self.per_token_s.get(speculative)
        if known is None:
            self.per_token_s[speculative] = per_token
        else:
            self.per_token_s[speculative] = known + self.smoothing * (per_token - known)

    def speculate(self) -> bool:
        """The kind of the next decode step (the first is plain: a yardstick)."""
        plain = self.per_token_s.get(False)
        if plain is None:
            return False
        spec = self.per_token_s.get(True)
        if spec is None:
            return True
        better = spec < plain
        self._since_explored += 1
        if self._since_explored >= self.explore_every:
            self._since_explored = 0
            return not better
        return better
