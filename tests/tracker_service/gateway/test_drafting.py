"""Prompt-lookup drafts and the adaptive draft length (gateway/drafting.py)."""

from __future__ import annotations

from tracker_service.gateway.drafting import DraftLength, PromptLookup, SpeedGate


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


def test_the_gate_takes_whichever_kind_of_step_served_tokens_faster() -> None:
    gate = SpeedGate(explore_every=4)
    assert not gate.speculate()  # the first decode step is plain: the yardstick
    gate.observe(False, step_s=0.200, tokens=1)  # 200 ms a token over slow links
    assert gate.speculate()  # speculation not measured yet: try it
    gate.observe(True, step_s=0.220, tokens=4)  # an edit: drafts kept, 55 ms a token
    picks = [gate.speculate() for _ in range(8)]
    assert picks.count(True) == 6 and picks.count(False) == 2  # and now and then plain
    for _ in range(10):
        gate.observe(True, step_s=0.230, tokens=1)  # a story: every draft rejected
    assert [gate.speculate() for _ in range(3)] == [False, False, False]
