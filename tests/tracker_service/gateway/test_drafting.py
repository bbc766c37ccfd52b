"""Prompt-lookup drafts and the adaptive draft length (gateway/drafting.py)."""

from __future__ import annotations

from tracker_service.gateway.drafting import DraftLength, PromptLookup, WaitGate, accepted_prefix


def test_the_latest_occurrence_of_the_longest_suffix_is_drafted_from() -> None:
    lookup = PromptLookup()
    # "1 2 3" occurred twice; the latest is followed by 7 8, the earlier by 4 5
    context = [1, 2, 3, 4, 5, 9, 1, 2, 3, 7, 8, 0, 1, 2, 3]
    assert lookup.draft(context, 2) == [7, 8]
    assert lookup.draft(context, 9) == [7, 8, 0, 1, 2, 3]  # never past the context
    # the suffix "6 3" never occurred; "4 6 3" shrinks to "6 3", never to one token
    assert PromptLookup().draft([3, 4, 6, 3], 2) == []
    assert PromptLookup(min_ngram=1).draft([3, 4, 6, 3], 2) == [4, 6]


def test_a_context_that_never_repeats_gets_no_draft_and_the_index_grows() -> None:
    lookup = PromptLookup()
    assert lookup.draft([1, 2, 3, 4], 4) == []
    assert lookup.draft([1, 2, 3, 4, 1, 2], 3) == [3, 4, 1]  # indexed as the context grew
    assert lookup.draft([1, 2, 3, 4, 1, 2], 0) == []


def test_the_draft_grows_after_a_full_accept_and_shrinks_after_a_miss() -> None:
    length = DraftLength(first=4, most=8)
    length.update(4, 4)
    assert length.now == 6
    length.update(6, 6)
    length.update(8, 8)
    assert length.now == 8  # capped
    for _ in range(10):
        length.update(0, 8)
    assert length.now == 1  # never below one


def test_only_the_confirmed_prefix_of_a_draft_is_kept() -> None:
    assert accepted_prefix([5, 6, 7], [5, 6, 9, 1]) == 2
    assert accepted_prefix([5, 6, 7], [4, 6, 7, 1]) == 0
    assert accepted_prefix([5, 6, 7], [5, 6, 7, 1]) == 3


def test_the_gate_opens_while_steps_mostly_wait_on_the_links() -> None:
    gate = WaitGate()
    assert not gate.open  # nothing measured yet: plain steps
    gate.observe(step_s=0.032, compute_s=0.030)  # loopback: the step is all compute
    assert not gate.open
    for _ in range(10):
        gate.observe(step_s=0.130, compute_s=0.030)  # 100 ms of round trips a step
    assert gate.open
    for _ in range(10):
        gate.observe(step_s=0.330, compute_s=0.300)  # a busy node: compute dominates again
    assert not gate.open
