"""The relay: nodes behind home routers serve their sessions over one outbound link.

A node that the tracker cannot dial holds one WebSocket to a relay
(``/relay/v1/link``, authenticated by the node's signed request); route
clients reach it at ``ws://relay/relay/<node_id>/v1/session`` and the relay
carries each client connection as one stream of that link (``mux.py``). The
relay never decodes what it carries: tickets, frames and receipts stay signed
end to end. It keeps no state worth losing: a restarted relay is reconnected
to by its nodes.

    hub.py        the links and their streams; bad input ends one stream or link
    routes.py     the WebSocket and HTTP routes (mounted in the tracker or alone)
    app.py        the relay as its own process (``meshnet-tracker relay``)
    link_auth.py  the node's signed handshake
    bandwidth.py  the per-node byte rate cap
    metrics.py    Prometheus counters and gauges
"""
