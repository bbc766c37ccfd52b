"""What a hop auditor is told: its rates, its budget, its judges' thresholds."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AuditSettings:
    rate: float = 0.02  # fraction of an established node's steps audited
    probation_rate: float = 0.25  # for an identity still on probation
    probation_audits: int = 20  # audits passed before probation ends
    # A whole audit (every replay) gets timeout_s plus timeout_per_position_s for each
    # position of the session so far, at most timeout_max_s (budget_s). Each replay's
    # open and steps get timeout_s, within what is left: a replayer that stalls is
    # passed over. Past the budget while a replayer was still answering frames, the
    # audit has timed out, which costs the audited hop (hop_audit.py).
    timeout_s: float = 10.0
    timeout_per_position_s: float = 0.05
    timeout_max_s: float = 300.0
    timeouts_to_withdraw: int = 3  # audits timing out in a row: off user routes
    # Established judges: passed audits and seconds since registration (issue 35).
    auditor_min_audits: int = 0
    auditor_min_age_s: float = 0.0
    # The endpoint policy for the replays it dials (endpoint_policy.py).
    allow_private_endpoints: bool = False
    allow_plaintext_nodes: bool = False  # route through unpinned ws:// nodes (development)
