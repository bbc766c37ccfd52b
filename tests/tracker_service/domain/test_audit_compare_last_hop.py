"""A last hop's audit compares everything that decides a token (issue 35): its token, and
its top ids and log-probs within the recipe's tolerance, forgiving near ties only."""

from __future__ import annotations

import numpy as np

from tracker_service.domain import wire_frames
from tracker_service.domain.audit_compare import compare_replies, logprob_tolerance

TOLERANCE = 1e-3  # float32: 0.01 nats of log-prob
REPLAY_IDS = [7, 3, 9, 4, 1]
REPLAY_LOGPROBS = [-0.5, -1.5, -2.0, -3.0, -4.0]


def _reply(token_ids: list[int], top_ids: list[int], logprobs: list[float]) -> bytes:
    ids = np.asarray(token_ids, dtype="<i8")
    tops = np.asarray([top_ids], dtype="<i8").reshape(1, len(top_ids))
    lps = np.asarray([logprobs], dtype="<f4").reshape(1, len(logprobs))
    return wire_frames.encode(
        {
            wire_frames.TOKEN_IDS: ("I64", ids.shape, ids.tobytes()),
            wire_frames.TOP_IDS: ("I64", tops.shape, tops.tobytes()),
            wire_frames.TOP_LOGPROBS: ("F32", lps.shape, lps.tobytes()),
        },
        {},
    )


REPLAY = _reply([7], REPLAY_IDS, REPLAY_LOGPROBS)


def _agree(observed: bytes) -> bool:
    return compare_replies(
        observed, REPLAY, last_hop=True, tolerance=TOLERANCE, max_bytes=1 << 20
    ).agree


def test_an_honest_reply_agrees_within_the_log_prob_tolerance() -> None:
    nudged = [v + 0.004 for v in REPLAY_LOGPROBS[:3]]
    assert _agree(_reply([7], REPLAY_IDS[:3], nudged))
    assert _agree(_reply([7], [], []))  # a greedy session asked for no log-probs
    assert logprob_tolerance(TOLERANCE) == 0.01


def test_a_reordered_or_relabelled_top_list_disagrees() -> None:
    swapped_ids = [1, 3, 9, 4, 7]  # rank 4 promoted, log-probs left in place
    assert not _agree(_reply([7], swapped_ids, REPLAY_LOGPROBS))
    reordered = list(zip(REPLAY_IDS, REPLAY_LOGPROBS, strict=True))
    reordered[0], reordered[3] = reordered[3], reordered[0]  # true values, wrong order
    assert not _agree(_reply([7], [t for t, _ in reordered], [v for _, v in reordered]))
    lifted = [REPLAY_LOGPROBS[0], -0.6, *REPLAY_LOGPROBS[2:]]  # token 3 made likelier
    assert not _agree(_reply([7], REPLAY_IDS, lifted))


def test_a_left_out_or_invented_token_disagrees() -> None:
    assert not _agree(_reply([7], [7, 9, 4], [-0.5, -2.0, -3.0]))  # token 3 dropped
    assert not _agree(_reply([7], [7, 99, 9], [-0.5, -1.0, -2.0]))  # 99 is not near the top


def test_the_greedy_token_must_match_unless_it_is_a_near_tie() -> None:
    assert not _agree(_reply([3], REPLAY_IDS, REPLAY_LOGPROBS))
    tie = _reply([7], [7, 3], [-0.693, -0.695])
    tied_replay = _reply([3], [3, 7], [-0.693, -0.694])
    near_tie = compare_replies(
        tie, tied_replay, last_hop=True, tolerance=TOLERANCE, max_bytes=1 << 20
    )
    assert near_tie.agree, near_tie.detail
