"""The tracker's HTTP API: FastAPI routes and their schemas, dependencies,
middleware (body limit, auth throttle, request guard) and metrics.

The only package that defines routes; it may import every package below it.
"""
