"""Seven liars against the smallest realistic network: are they caught, and at what cost?

Each scenario is a network of its own: a real tracker app in process and real node
processes of the default model (SmolLM2-135M, 30 layers; ``tests/support/
adversary_network.py``), two or three per range, one of them a test-side liar
(``tests/support/lies``). User answers run through the gateway's own generation loop
(gateway/generation.py) with the tracker's own auditor, planner, dispute board,
arbitration and credit ledger. A new identity is on probation, so its audited steps are
audited inline; by default every step is (``--audit-rate 1``, as the attack tests run);
``--audit-rate 0.25`` is the tracker's default probation rate, where a lie on a step
not sampled reaches the user.

  every-step     perturbs every reply (tests/support/lies/rate.py at rate 1)
  sampling-only  honest on greedy answers, chooses the token of sampled ones itself
  odd-range      every step, on layers 0-17 where the others end at 15 or 30
  deep-session   honest for a session's first 19 steps, lies from the 20th
  chain-metadata forwards its successor the right tensor with rewind=1, position=0
  replay-only    honest on user routes, lies when it replays another's step, with a
                 sybil of the same invite batch that lies the same way, ready to
                 judge; audits and arbiters must be established and independent
  claims-1e12    an honest node that registers and beats 1e12 tokens/s

Phase 1, the attack: ``--sessions`` answers, every route forced through the liar while
it is not quarantined (the worst case for the defence; replay-only and claims-1e12
run unforced: their attack is on others' audits and on route choice; the claimant's
network answers at least 12, so every node is measured). Phase 2, its share:
``--routes`` serve routes from the tracker's planner (the gateway's path), counted
against a fair share (routes / nodes starting at its first layer).

Per scenario one line: caught (quarantined; for the claimant: no more than 1.5 times
its fair share of routes), user steps until quarantined (the network's decode steps
from the first, the catching step's replacement token included), tokens served
through it after its first lie, its routes against its fair share, honest nodes
quarantined. Last line: ``caught: X of 7, honest quarantined: N``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script

from tests.support.adversary_network import AdversaryNetwork, NodeSpec, adversary_network
from tracker_service.domain.route_formation import PURPOSE_SERVE, NoRoute
from tracker_service.gateway.generation import Generation
from tracker_service.services.hop_audit import AuditSettings
from tracker_service.services.route_planner import RouteRefused
from tracker_service.services.session_plan import Sampling
from tracker_service.store.invites import add_invite, redeem_invite
from tracker_service.store.quarantine import record_audit_passed

PROMPT = [504, 3458, 282, 4649, 314]  # a few ids of the default model's vocabulary
GREEDY = Sampling(temperature=0.0)
SAMPLED = Sampling(temperature=1.0, top_p=0.95, seed=3)  # what a chat request opens
LIE_AFTER = 20  # deep_session's default: honest for a session's first 19 steps
CLAIM = 1e12
CAPTURE = 1.5  # a claimant is caught if it gets no more than this times its fair share
MEASURED_SESSIONS = 12  # unforced answers before the claimant's share is counted


def _audit(rate: float = 1.0, min_audits: int = 0, min_age_s: float = 0.0) -> AuditSettings:
    return AuditSettings(
        rate=rate,
        probation_rate=rate,  # a newcomer's sampled steps, inline (rate 1: every step)
        timeout_s=60.0,  # two shared cores: no audit runs out of time for load alone
        auditor_min_audits=min_audits,
        auditor_min_age_s=min_age_s,
        allow_private_endpoints=True,
        allow_plaintext_nodes=True,  # the node processes serve ws:// on loopback
    )


@dataclass
class Scenario:
    name: str
    specs: list[NodeSpec]
    new_tokens: int = 8
    forced: bool = True
    chain: bool = False
    sampling: Callable[[int], Sampling] = lambda _: GREEDY
    # whether the liar lies on a user route at this token of this session
    lies: Callable[[int, int], bool] = lambda session, token: True
    audit: AuditSettings = field(default_factory=_audit)
    claims: dict[int, float] = field(default_factory=dict)
    prepare: Callable[[AdversaryNetwork, str], None] | None = None
    speed_only: bool = False

    @property
    def liar_index(self) -> int:
        if self.claims:
            return next(iter(self.claims))
        return next(i for i, spec in enumerate(self.specs) if spec[2])


@dataclass
class Result:
    caught: bool
    steps: int | None
    served_after_lie: int
    routes: int
    asked: int
    fair: float
    honest_quarantined: int


def _replay_only_history(net: AdversaryNetwork, liar: str) -> None:
    """The network has served before: every identity but the sybil has one passed audit
    (the liar is honest on user routes, so it passes its own); the liar's operator took
    two uses of one invite, for the liar and the sybil."""
    sybil = next(n for n in net.liars if n != liar)
    now = time.time()
    with net.app.state.tracker.database.sessions.begin() as session:
        _, code = add_invite(session, label="one operator's batch", now=now, max_uses=2)
        redeem_invite(session, code, node_id=liar, now=now)
        redeem_invite(session, code, node_id=sybil, now=now)
        record_audit_passed(session, [n.node_id for n in net.nodes if n.node_id != sybil])


def scenarios(new_tokens: int, rate: float = 1.0) -> list[Scenario]:
    deep = max(new_tokens, LIE_AFTER + 4)
    audit = _audit(rate)
    return [
        Scenario(
            "every-step",
            [(0, 30, None), (0, 30, None), (0, 30, "every_step")],
            new_tokens,
            audit=audit,
        ),
        Scenario(
            "sampling-only",
            [(0, 30, None), (0, 30, None), (0, 30, "sampling_only")],
            new_tokens,
            audit=audit,
            # greedy and sampled answers alternate; it lies on the sampled ones
            sampling=lambda session: SAMPLED if session % 2 else GREEDY,
            lies=lambda session, token: session % 2 == 1,
        ),
        Scenario(
            "odd-range",
            [(0, 15, None), (15, 30, None), (0, 30, None), (0, 30, None), (0, 17, "every_step")],
            new_tokens,
            audit=audit,
        ),
        Scenario(
            "deep-session",
            [(0, 30, None), (0, 30, None), (0, 30, "every_step,deep_session")],
            deep,
            audit=audit,
            lies=lambda session, token: token + 1 >= LIE_AFTER,
        ),
        Scenario(
            "chain-metadata",
            [(0, 15, "chain_metadata"), (0, 15, None), (15, 30, None), (15, 30, None)],
            new_tokens,
            audit=audit,
            chain=True,
            lies=lambda session, token: token >= 1,  # from the first decode step
        ),
        Scenario(
            "replay-only+sybil",
            [
                (0, 15, "every_step,replay_only"),  # the liar
                (0, 15, "every_step,replay_only"),  # its sybil, same invite batch
                (0, 15, None),
                (0, 15, None),
                (15, 30, None),
                (15, 30, None),
            ],
            new_tokens,
            forced=False,
            lies=lambda session, token: False,  # its lies are in replays, not on routes
            audit=_audit(rate, min_audits=1, min_age_s=0.0),
            prepare=_replay_only_history,
        ),
        Scenario(
            "claims-1e12",
            [(0, 30, None), (0, 30, None), (0, 30, None)],
            new_tokens,
            audit=audit,
            forced=False,
            claims={2: CLAIM},
            speed_only=True,
        ),
    ]


def _speed(measured: float | None) -> str:
    return "unmeasured" if measured is None else f"{measured:.1f} tokens/s"


def _route_share(net: AdversaryNetwork, liar: str, count: int) -> int:
    """Routes through the liar among `count` serve routes from the tracker's planner (the
    gateway's own path, PURPOSE_SERVE); one more asked of POST /api/v1/routes, shown
    when it is refused."""
    net.beat()
    planner = net.app.state.routing.planner
    deadline = time.monotonic() + 30.0
    while planner.speeds.pending() and time.monotonic() < deadline:  # written behind
        time.sleep(0.05)
    planner.cache.forget()
    through = 0
    for _ in range(count):
        try:
            plan = planner.plan(net.nodes[0].fingerprint, purpose=PURPOSE_SERVE)
        except (NoRoute, RouteRefused) as exc:  # a dispute may withdraw a whole range
            print(f"  serve route refused: {exc}", flush=True)
            continue
        through += liar in {hop.node_id for hop in plan.hops}
    digest, recipe = net.nodes[0].fingerprint
    key = {"model_artifact_digest": digest, "runtime_recipe_digest": recipe}
    response = net.client.post("/api/v1/routes", json=key)
    if response.status_code != 200:
        print(f"  POST /api/v1/routes: {response.status_code} {response.text[:200]}", flush=True)
    return through


def run(scenario: Scenario, model: Path, root: Path, sessions: int, routes: int) -> Result:
    with adversary_network(
        root / scenario.name,
        model,
        scenario.specs,
        tracker={
            "auditor_min_audits": scenario.audit.auditor_min_audits,
            "auditor_min_age_s": scenario.audit.auditor_min_age_s,
        },
        audit=scenario.audit,
        claims=scenario.claims,
    ) as net:
        liar = net.nodes[scenario.liar_index].node_id
        net.certify()
        if scenario.prepare is not None:
            scenario.prepare(net, liar)
        with net.heartbeats():  # the nodes' own loops would beat
            arbitration = net.app.state.routing.arbitration
            steps = 0
            caught_at: int | None = None
            served_after_lie = 0
            lied = False

            def quarantined() -> bool:
                return net.state(liar) == "quarantined"

            # a claimant's phase 1 is its measurement: enough answers that each node is timed
            for session in range(
                max(sessions, MEASURED_SESSIONS) if scenario.speed_only else sessions
            ):
                if caught_at is not None and not scenario.speed_only:
                    break
                index = 0

                def on_token(_: int, generation: Generation, session: int = session) -> None:
                    nonlocal steps, caught_at, served_after_lie, lied, index
                    steps += 1
                    through = liar in {h.node_id for h in generation.stats.routes[-1].hops}
                    if through and scenario.lies(session, index):
                        lied = True
                    if through and (lied or scenario.speed_only):
                        served_after_lie += 1
                    index += 1
                    if caught_at is None and quarantined():
                        caught_at = steps

                force = liar if scenario.forced else None
                try:
                    net.generate(
                        PROMPT,
                        scenario.new_tokens,
                        scenario.sampling(session),
                        force=force,
                        chain=scenario.chain,
                        on_token=on_token,
                    )
                except Exception as exc:  # a whole range withdrawn: the user got a 503
                    print(f"  {scenario.name}: session {session} failed: {exc}", flush=True)
                asyncio.run(arbitration.run_pass())  # what its loop does every few seconds
                if any(liar in d.nodes for d in net.app.state.routing.disputes.open()):
                    lied = True
                if caught_at is None and quarantined():
                    caught_at = steps
            through = _route_share(net, liar, routes)
            if scenario.speed_only:
                shown = net.client.get(f"/api/v1/nodes/{liar}").json()
                others = [
                    net.client.get(f"/api/v1/nodes/{n}").json().get("measured_throughput")
                    for n in net.honest
                    if n != liar
                ]
                print(
                    f"  {scenario.name}: claims {shown.get('throughput'):.0e} tokens/s, measured "
                    f"{_speed(shown.get('measured_throughput'))} over "
                    f"{shown.get('measured_steps')} steps; the honest nodes measured "
                    f"{', '.join(_speed(o) for o in others)}",
                    flush=True,
                )
            fair = routes / sum(
                1 for n in net.nodes if n.start == net.nodes[scenario.liar_index].start
            )
            honest = [n for n in net.honest if n != liar]  # the claimant runs honest code
            honest_quarantined = sum(1 for n in honest if net.state(n) == "quarantined")
            caught = through <= CAPTURE * fair if scenario.speed_only else caught_at is not None
            return Result(
                caught,
                caught_at,
                served_after_lie,
                through,
                routes,
                fair,
                honest_quarantined,
            )


def _line(name: str, r: Result, speed_only: bool) -> str:
    steps = "-" if speed_only else ("never" if r.steps is None else str(r.steps))
    return (
        f"{name:<18} caught: {'yes' if r.caught else 'no '}  steps until quarantined: "
        f"{steps:>5}  tokens through it after its first lie: {r.served_after_lie:>3}  "
        f"routes: {r.routes} of {r.asked} (fair share {r.fair:.0f})  "
        f"honest quarantined: {r.honest_quarantined}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=6, help="answers per scenario")
    parser.add_argument("--tokens", type=int, default=8, help="new tokens per answer")
    parser.add_argument("--routes", type=int, default=30, help="route requests for shares")
    parser.add_argument("--quick", action="store_true", help="3 answers of 6 tokens, 20 routes")
    parser.add_argument("--only", help="run the scenarios whose name contains this")
    parser.add_argument(
        "--audit-rate",
        type=float,
        default=1.0,
        help="audit and probation rate (the tracker's default probation rate is 0.25)",
    )
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.tokens, args.routes = 3, 6, 20
    from core.models.default_model import ensure_default_model

    default_cache = Path(__file__).resolve().parents[1] / ".meshnet" / "test-cache"
    model = ensure_default_model(
        Path(os.environ.get("MESHNET_TEST_CACHE", default_cache)) / "models"
    )
    every = scenarios(args.tokens, args.audit_rate)
    chosen = [s for s in every if not args.only or args.only in s.name]
    print(
        f"model {model.name}, node processes (torch threads 1), {args.sessions} answers of "
        f"{args.tokens} new tokens (deep-session {max(args.tokens, LIE_AFTER + 4)}), "
        f"{args.routes} route requests per scenario",
        flush=True,
    )
    print(
        f"tracker: audit rate {args.audit_rate}, probation rate {args.audit_rate} (inline), "
        "audit_timeout_s 60; "
        "auditor_min_audits 0, auditor_min_age_s 0 (a minutes-old network), except "
        "replay-only+sybil: auditor_min_audits 1, auditor_min_age_s 0, every identity but "
        "the sybil with one passed audit",
        flush=True,
    )
    caught = honest = 0
    with tempfile.TemporaryDirectory() as tmp:
        for scenario in chosen:
            began = time.monotonic()
            result = run(scenario, model, Path(tmp), args.sessions, args.routes)
            caught += result.caught
            honest += result.honest_quarantined
            print(
                f"{_line(scenario.name, result, scenario.speed_only)}  "
                f"({time.monotonic() - began:.0f} s)",
                flush=True,
            )
    print(f"caught: {caught} of {len(chosen)}, honest quarantined: {honest}")


if __name__ == "__main__":
    main()
