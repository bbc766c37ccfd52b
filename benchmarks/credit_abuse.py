"""What an abuser of the credit ledger gets: five attacks on a live tracker, each measured.

A real tracker (uvicorn on loopback, gateway capped so credit buys priority) with
two real in-process nodes of a tiny 4-layer chat model (the gateway tests' cluster,
tests/tracker_service/gateway_cluster.py), and a private tracker process with real
executor loops for the job queue (tests/support/private_jobs_tracker.py). Each
attack prints what the attacker got: credit earned it should not have, and credit
spent beyond what it earned.

- double spend: one identity earns 0.3 credit, then moves from account to account
  (up to 5), re-linking the same API key, spending with chats in each;
- garbage executor: on a private tracker (a real tracker process, checked job work:
  docs/jobs.md "Checked work"), a stranger with no join token tries to register as
  an executor, and an admitted executor completes tasks with a made-up metrics.json
  beside two honest ones (tests/support/lies/garbage_metrics.py); the liar must earn
  nothing and be quarantined from jobs once an honest result disagrees with it;
- squatted name: an attacker claims ``pc-<victim's node id>`` before the victim;
- unlinked own key: chats through one's own nodes with a key linked to no account,
  from the nodes' own address;
- overdraft race: 16 chats at once on an account that earned 0.5 credit.

The LAST line is ``attacks that gained anything: N of 5`` (the target is 0).

    python benchmarks/credit_abuse.py
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from core.errors import TrackerRefused  # noqa: E402
from tests.support.credit_chats import chat, chats_at_once, keys_enforced  # noqa: E402
from tests.support.credit_claims import (  # noqa: E402
    claim_body,
    give_credit,
    new_api_key,
    post_claim,
    total_spent,
    wait_linked,
)
from tests.support.lies.garbage_metrics import GarbageRunner  # noqa: E402
from tests.support.private_jobs_tracker import job_quarantined, private_jobs_tracker  # noqa: E402
from tests.tracker_service.conftest import register  # noqa: E402
from tests.tracker_service.gateway_cluster import (  # noqa: E402
    GatewayCluster,
    build_chat_model,
    start_cluster,
)
from tests.tracker_service.helpers import FakeNode  # noqa: E402

GARBAGE_TASKS = 3  # tasks of the job the liar and the honest executors share

# Credit earned, credit spent beyond earnings, anything else taken (a name), a note.
Outcome = tuple[float, float, bool, str]


def node_credit(url: str, node_id: str) -> float:
    """An identity's credit as the leaderboard shows it (0 when it has none)."""
    reply = httpx.get(f"{url}/api/v1/credits/{node_id}", timeout=10, trust_env=False)
    return float(reply.json()["total"]) if reply.status_code == 200 else 0.0


def double_spend(cluster: GatewayCluster) -> Outcome:
    database = cluster.app.state.tracker.database
    spender = FakeNode(endpoint="ws://127.0.0.1:9201")
    key = new_api_key(database, "double-spender")
    earned = 0.3
    before = total_spent(cluster.app)
    linked = 0
    with cluster.http() as http:
        register(http, spender)
        give_credit(database, spender.node_id, earned)
        keys_enforced(cluster)
        for index in range(5):
            account = f"spender-{index}"
            if (
                post_claim(http, claim_body([spender], account, api_key=key), key).status_code
                != 200
            ):
                continue
            linked += 1
            wait_linked(cluster.app, database, key, account)
            for _ in range(3):
                chat(cluster, key)
    spent = total_spent(cluster.app) - before
    return 0.0, max(0.0, spent - earned), False, f"{linked} accounts linked, {spent:.3f} spent"


def garbage_executor(folder: Path) -> Outcome:
    with private_jobs_tracker(folder) as tracker:
        job_id = tracker.submitter.submit(tasks=GARBAGE_TASKS).json()["job_id"]
        # A stranger without the join token: refused before it sees any task.
        stranger = tracker.executor(folder, "stranger", join_token=None)
        try:
            stranger.client.register()
            registered = True
        except TrackerRefused:
            registered = False
        stranger_ran = stranger.run(once=True)
        # An admitted liar beside two honest executors, all new (on probation).
        liar = tracker.executor(folder, "liar", runner=GarbageRunner())
        honest = [tracker.executor(folder, f"honest{i}") for i in (1, 2)]
        for loop in (liar, *honest):
            loop.client.register()
        for _ in range(2):  # the liar takes what it can before anyone checks it
            liar.run(once=True)
        for _ in range(4 * GARBAGE_TASKS):  # bounded: each round runs up to 3 tasks
            if tracker.submitter.show(job_id)["state"] in ("succeeded", "failed"):
                break
            for loop in (liar, *honest):
                loop.run(once=True)
        quarantined = job_quarantined(liar)
        earned = tracker.earned(stranger.client.node_id) + tracker.earned(liar.client.node_id)
        paid = sum(tracker.earned(loop.client.node_id) for loop in honest)
    note = f"registered without a join token: {'yes' if registered or stranger_ran else 'no'}; "
    note += f"{liar.tasks_accepted} garbage tasks completed, liar quarantined from jobs: "
    note += f"{'yes' if quarantined else 'no'}, honest executors paid {paid:.3f}"
    return earned, 0.0, registered or stranger_ran > 0 or not quarantined, note


def squatted_name(cluster: GatewayCluster) -> Outcome:
    victim = cluster.nodes[0]
    squatter = FakeNode(endpoint="ws://127.0.0.1:9202")
    name = f"pc-{victim.node_id}"
    with cluster.http() as http:
        register(http, squatter)
        taken = post_claim(http, claim_body([squatter], name)).status_code == 200
        victim_claim = claim_body([victim.as_fake_node()], name)
        victim_linked = post_claim(http, victim_claim).status_code == 200
    note = f"name taken by the squatter: {'yes' if taken else 'no'}; "
    note += f"victim linked: {'yes' if victim_linked else 'no'}"
    return 0.0, 0.0, taken or not victim_linked, note


def unlinked_own_key(cluster: GatewayCluster) -> Outcome:
    database = cluster.app.state.tracker.database
    key = new_api_key(database, "self-dealer")
    keys_enforced(cluster)
    ids = [node.node_id for node in cluster.nodes]
    before = sum(node_credit(cluster.url, n) for n in ids)
    for _ in range(3):
        chat(cluster, key)
    cluster.app.state.gateway.credits.board.invalidate()  # read the ledger as it is now
    earned = sum(node_credit(cluster.url, n) for n in ids) - before
    return max(0.0, earned), 0.0, False, "3 chats through its own nodes"


def overdraft_race(cluster: GatewayCluster) -> Outcome:
    database = cluster.app.state.tracker.database
    racer = FakeNode(endpoint="ws://127.0.0.1:9203")
    key = new_api_key(database, "racer")
    earned = 0.5
    with cluster.http() as http:
        register(http, racer)
        give_credit(database, racer.node_id, earned)
        post_claim(http, claim_body([racer], "racer", api_key=key), key)
    wait_linked(cluster.app, database, key, "racer")
    before = total_spent(cluster.app)
    chats_at_once(cluster, key, 16, 8)
    spent = total_spent(cluster.app) - before
    return 0.0, max(0.0, spent - earned), False, f"16 chats at once, {spent:.3f} spent"


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        model = build_chat_model(root / "model")
        cluster = start_cluster(root / "tracker", model, gateway_max_concurrent=4)
        try:
            cluster.add_node(0, 2)
            cluster.add_node(2, 4)
            cluster.wait_certified()
            attacks: list[tuple[str, Callable[[], Outcome]]] = [
                ("squatted name", lambda: squatted_name(cluster)),
                ("double spend", lambda: double_spend(cluster)),
                ("garbage executor", lambda: garbage_executor(root / "jobs")),
                ("unlinked own key", lambda: unlinked_own_key(cluster)),
                ("overdraft race", lambda: overdraft_race(cluster)),
            ]
            gained = 0
            for name, attack in attacks:
                earned, beyond, took, note = attack()
                gained += earned > 1e-9 or beyond > 1e-9 or took
                print(
                    f"{name}: credit earned {earned:.3f}, credit spent beyond earnings "
                    f"{beyond:.3f} ({note})"
                )
        finally:
            cluster.stop()
    print(f"attacks that gained anything: {gained} of {len(attacks)}")


if __name__ == "__main__":
    main()
