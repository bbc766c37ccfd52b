"""MeshNet's hosted tracker: registry, certification ledger, routes, status.

Never imports ``core`` or ``app``: what it verifies (signed requests, recipe
fingerprints) it re-implements, pinned to the node by the vectors in
``tests/data/``.

Packages, lowest first; each imports only the ones before it
(docs/architecture.md#the-tracker, kept true by tests/test_architecture.py):
    errors.py, config.py    TrackerError and its tree; Settings
    domain/                 pure rules: recipe_identity, wire, wire_frames, tickets, keys,
                            allocation, route_formation (chains shards into a route)
    store/                  tables, Alembic migrations, repositories:
        nodes.live_nodes_for_fingerprint   a fingerprint's live nodes (covering index)
        routing_version                    bumped when a fingerprint's routable set changes
        ledger.PersistentLedger            dark/certified recipes in the database
        hashed_secrets.HashedSecrets       join tokens, API keys, submitter tokens, invites
    relay/                  the relay for nodes behind home routers
    security/               auth.verify_signed_request, endpoint_policy, address_limits
    services/               certifier, hop_audit, reachability, rebalancing, route_planner,
                            route_session (drives one session), candidate_cache
    gateway/                the OpenAI-compatible gateway
    api/                    routes/ (only they raise HTTPException), schemas/, deps
                            (TrackerContext, SignedNode), middleware, metrics, status
    app.create_app(settings)        the FastAPI app; build_context() wires the parts
    cli/                    meshnet-tracker and its subcommands
"""
