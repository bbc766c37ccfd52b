"""Helpers only the tests and the benchmarks use, kept out of the shipped packages.

route.py       drive a route of hops from the client side (RouteSession)
hop_client.py  one WebSocket to one node for one session (HopClient)
tickets.py     sign a route ticket the way the tracker does (sign_ticket)
documents.py   sign and check a whole JSON document (sign_document, verify_document)
"""
