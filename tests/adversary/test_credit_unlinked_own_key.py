"""A contributor sends requests through their own nodes with an API key linked to no
account, from the nodes' own address: own traffic, so those nodes earn nothing."""

from __future__ import annotations

from typing import Any

import httpx

from tests.support.credit_chats import chat, keys_enforced
from tests.support.credit_claims import new_api_key
from tests.support.waiting import wait_until
from tests.tracker_service.gateway_cluster import GatewayCluster

CHATS = 3


def identity_credit(cluster: GatewayCluster, node_id: str) -> dict[str, Any] | None:
    reply = httpx.get(f"{cluster.url}/api/v1/credits/{node_id}", trust_env=False)
    if reply.status_code == 404:
        return None
    found: dict[str, Any] = reply.json()["identities"][0]
    return found


def test_an_unlinked_key_from_the_nodes_own_address_earns_them_nothing(
    credit_cluster: GatewayCluster,
) -> None:
    database = credit_cluster.app.state.tracker.database
    key = new_api_key(database, "self-dealer")  # linked to no account
    keys_enforced(credit_cluster)
    for _ in range(CHATS):
        chat(credit_cluster, key)  # from 127.0.0.1, where both nodes are

    node_ids = [node.node_id for node in credit_cluster.nodes]

    def counted() -> bool:
        rows = [identity_credit(credit_cluster, n) for n in node_ids]
        return all(r is not None and r["hops"] >= CHATS for r in rows)

    wait_until(counted, 15, "the chats' hops to reach the ledger")
    for node_id in node_ids:
        row = identity_credit(credit_cluster, node_id)
        assert row is not None and row["own_hops"] >= CHATS
        assert row["earned"] == 0.0  # no credit for own traffic
