"""The node's data plane: the shard server route clients reach over WebSocket.

Public API:

    DataPlaneServer(shard_sessions, node_id, public_key, sign, tracker_public_key,
                    fingerprint, shard_range, max_frame_bytes, host, port, clock)
        .start()/.stop() (background thread) or .start_async()/.stop_async()
        .port .url .session_url .http_url
    RouteTicket, TicketVerifier, ticket_message                    (tickets.py)
    HopReceipt, sign_receipt, verify_receipt, receipt_message      (receipts.py)
    answer_challenge, verify_challenge, reachability_message       (challenge.py)
    encode_frame, decode_frame                                     (frames.py)

``server`` imports the runtime and websockets; import it from its module so
that ticket/receipt code stays importable on its own. The client side a test
drives (``HopClient``, ``sign_ticket``) lives in ``tests/support/``.
"""

from __future__ import annotations
