"""What an abuser of the credit ledger gets: five attacks on a live tracker, each measured.

A real tracker (uvicorn on loopback, gateway capped so credit buys priority) with
two real in-process nodes of a tiny 4-layer chat model (the gateway tests' cluster,
tests/tracker_service/gateway_cluster.py), and a private tracker behind a TestClient
for the job queue. Each attack prints what the attacker got: credit earned it should
not have, and credit spent beyond what it earned.

- double spend: one identity earns 0.3 credit, then moves from account to account
  (up to 5), re-linking the same API key, spending with chats in each;
- garbage executor: a stranger with no join token registers as an executor on a
  private tracker and completes 5 tasks with a made-up metrics.json (docs/jobs.md);
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
from fastapi.testclient import TestClient

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.credit_chats import chat, chats_at_once, keys_enforced  # noqa: E402
from tests.support.credit_claims import (  # noqa: E402
    claim_body,
    give_credit,
    new_api_key,
    post_claim,
    total_spent,
    wait_linked,
)
from tests.tracker_service.conftest import make_settings, register  # noqa: E402
from tests.tracker_service.gateway_cluster import (  # noqa: E402
    GatewayCluster,
    build_chat_model,
    start_cluster,
)
from tests.tracker_service.helpers import FakeNode  # noqa: E402
from tests.tracker_service.jobs_helpers import (  # noqa: E402
    FakeExecutor,
    Submitter,
    issue_submitter_token,
)
from tracker_service.app import create_app  # noqa: E402

# Credit earned, credit spent beyond earnings, anything else taken (a name), a note.
Outcome = tuple[float, float, bool, str]


def node_credit(url_or_client: str | TestClient, node_id: str) -> float:
    """An identity's credit as the leaderboard shows it (0 when it has none)."""
    path = f"/api/v1/credits/{node_id}"
    if isinstance(url_or_client, TestClient):
        found = url_or_client.get(path)
        status, body = found.status_code, found.json()
    else:
        reply = httpx.get(url_or_client + path, timeout=10, trust_env=False)
        status, body = reply.status_code, reply.json()
    return float(body["total"]) if status == 200 else 0.0


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
    settings = make_settings(folder, private=True, background_tasks=False)
    app = create_app(settings)
    with TestClient(app) as client:
        database = app.state.tracker.database
        submitter = Submitter(client, issue_submitter_token(database))
        submitter.submit(tasks=5)
        stranger = FakeExecutor(client)
        registered = stranger.register().status_code == 200
        completed = 0
        if registered:
            for _ in range(5):
                lease = stranger.claim()
                if lease.status_code != 200:
                    break
                reply = stranger.finish(lease.json(), metrics=b'{"loss": "garbage"}')
                completed += reply.status_code == 200
        earned = node_credit(client, stranger.node.node_id)
    database.dispose()
    note = f"registered without a join token: {'yes' if registered else 'no'}; "
    return earned, 0.0, False, note + f"{completed} tasks completed with garbage"


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
