"""MeshNet's hosted tracker: registry, certification ledger, routes, status.

Never imports ``core`` or ``app``: what it verifies (signed requests, recipe
fingerprints) it re-implements, pinned to the node by the vectors in
``tests/data/``.

Where things are:
    app.create_app(settings)        the FastAPI app; build_context() wires the parts
    deps.TrackerContext             settings, database, key, ledger, metrics, caches
    auth.verify_signed_request      the signed-request check (deps.SignedNode)
    keys.TrackerKey.sign(domain, payload)   tickets and session credentials
    recipe_identity                 parse_identity, digests, evidence, ledger contract
    store/                          tables, migrations (Alembic), repositories:
        nodes.live_nodes_for_fingerprint   a fingerprint's live nodes (covering index)
        routing_version                    bumped when a fingerprint's routable set changes
        ledger.PersistentLedger            dark/certified recipes in the database
        heartbeats.HeartbeatWriter         a heartbeat's two statements, precompiled
        group_commit.HeartbeatCommits      heartbeats arriving together share a commit
    candidate_cache.CandidateCache  route candidates per fingerprint, kept until they change
    routes/                         one module per resource; only they raise HTTPException
        heartbeat.HeartbeatShortcut        answers heartbeats ahead of the router
"""
